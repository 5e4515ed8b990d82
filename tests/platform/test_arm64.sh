#!/usr/bin/env bash
# arm64, the DGX Spark's architecture (Grace), built on this amd64 machine: in a Debian 12
# "bookworm" tree with arm64 as a foreign architecture, crossbuild-essential-arm64 and
# debian/control's Build-Depends for arm64 (libevent-dev:arm64 and liblldpctl-dev:arm64 are not
# co-installable with the amd64 ones, so this happens in a tree of its own, not on the host):
#   1. a cross build with warnings as errors (the CI's options, tests/platform/arm64-cross.ini),
#      then its unit suite run under qemu-user (qemu-aarch64-static, meson's exe_wrapper: no
#      binfmt registration needed);
#   2. `dpkg-buildpackage -aarm64 -us -uc -b` (debhelper writes its own cross file; its unit
#      suite is the one run in 1, so the package build runs with nocheck);
#   3. the package is arm64 and its sparkd, run under qemu-user, accepts the shipped config.
# The tree is made once (debootstrap, about 4 minutes and the Debian mirror) and cached in
# /var/cache/sparkd-tests, remade when Build-Depends change; each run works on a throw-away
# overlay of it (tests/platform/lib_tree.sh).
#
# usage: test_arm64.sh [SOURCE_ROOT]
# env:   SPARKD_PLATFORM_CACHE  where the tree is kept
#        KEEP_TEST_TMP=1        keep the work directory (logs, the packages)
# exit:  0 pass, 1 fail, 77 skip (not root, no systemd-nspawn, no tree and no way to make one)
set -euo pipefail

src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
here=$src/tests/platform

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

tmp=
. "$here/lib_tree.sh"
qemu=$(command -v qemu-aarch64-static) || skip "qemu-aarch64-static not found (Debian: qemu-user-static)"
tmp=$(mktemp -d /tmp/sparkd-arm64.XXXXXX)
chmod 755 "$tmp"
cleanup() {
        local rc=$?
        trap - EXIT
        if [ -n "${KEEP_TEST_TMP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
        exit "$rc"
}
trap cleanup EXIT
t_start=$(date +%s)

tree_prepare bookworm-arm64-build-deps bookworm ca-certificates "$here/setup_build_deps.sh" HOST_ARCH=arm64
t_tree=$(date +%s)

mkdir -p "$tmp/work"
source_copy "$tmp/work/sparkd"
cp "$here/arm64_inside.sh" "$here/arm64-cross.ini" "$tmp/work/"

step "in the bookworm tree: arm64 cross build, unit tests under qemu-user, package (log: inside.log)"
rc=0
tree_run --bind-ro="$qemu:/usr/local/bin/qemu-aarch64-static" \
        bash /srv/work/arm64_inside.sh >"$tmp/inside.log" 2>&1 || rc=$?
tree_report "arm64 cross" "$rc"
echo "PASS: sparkd cross-builds for arm64 with warnings as errors, its unit tests pass under qemu-user, and dpkg-buildpackage -aarm64 builds it"
