#!/usr/bin/env bash
# Installs what is missing, builds, and runs sparkd in the foreground with built-in defaults
# (socket /run/sparkd/sparkd.sock, state /var/lib/sparkd). Extra arguments go to sparkd.
# Ask it from another terminal: build/client/sparkc status
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh build
[ -f build/build.ninja ] || meson setup build
ninja -C build
exec build/daemon/sparkd --foreground "$@"
