#!/usr/bin/env bash
# Installs what is missing, builds, and runs sparkd in the foreground with built-in defaults
# (socket /run/sparkd/sparkd.sock, state /var/lib/sparkd). Extra arguments go to sparkd.
# Ask it from another terminal: build/client/sparkc status
# Runs as root; started by another user, it runs itself again through sudo.
set -euo pipefail
. "$(dirname "$0")/root.sh"
as_root "$0" "$@"
cd "$(dirname "$0")/.."
scripts/deps.sh build
[ -f build/build.ninja ] || meson setup build
ninja -C build
exec build/daemon/sparkd --foreground "$@"
