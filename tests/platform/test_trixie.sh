#!/usr/bin/env bash
# The newer platform a DGX Spark owner builds on: Debian 13 "trixie" (gcc 14, glibc 2.41, json-c
# 0.18, the t64 library names, systemd.pc in systemd-dev), the Debian nearest to Ubuntu 24.04 and
# DGX OS. In a trixie tree holding only debian/control's Build-Depends (and sudo):
#   1. the tree's build as CI makes it: warnings as errors, then the unit suite;
#   2. the README's build block (<!-- e2e: build -->, taken out by tests/package/readme_blocks.py),
#      as written, by the user "owner" with sudo: `sudo scripts/deps.sh build` must find nothing
#      missing there, and `dpkg-buildpackage -us -uc -b` builds and runs the unit suite;
#   3. the README's install command (`sudo apt install ./sparkd_*.deb`), as that user; what the
#      package depends on comes from the mirror (apt's archives are cached beside the tree);
#   4. the package's Depends names the package of every shared library its programs link
#      (trixie's t64 names among them) and `sparkd --check-config` accepts the shipped config.
# The tree is made once (debootstrap, about 3 minutes and the Debian mirror) and cached in
# /var/cache/sparkd-tests, remade when Build-Depends change; each run works on a throw-away
# overlay of it (tests/platform/lib_tree.sh).
#
# usage: test_trixie.sh [SOURCE_ROOT]
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
tmp=$(mktemp -d /tmp/sparkd-trixie.XXXXXX)
chmod 755 "$tmp"
cleanup() {
        local rc=$?
        trap - EXIT
        if [ -n "${KEEP_TEST_TMP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
        exit "$rc"
}
trap cleanup EXIT
t_start=$(date +%s)

tree_prepare trixie-build-deps trixie sudo,ca-certificates "$here/setup_build_deps.sh"
t_tree=$(date +%s)

mkdir -p "$tmp/work" "$cache/trixie-apt-archives/partial"
source_copy "$tmp/work/sparkd"
python3 "$src/tests/package/readme_blocks.py" "$src/README.md" "$tmp/readme" >/dev/null ||
        fail "no e2e blocks in README.md (above)"
build_cmds=("$tmp"/readme/*.build.sh)
[ -f "${build_cmds[0]}" ] || fail "README.md marks no build block (<!-- e2e: build -->)"
{ cat "${build_cmds[@]}"; echo 'ls sparkd_*.deb'; } >"$tmp/work/build.sh"
grep -h 'apt install \./sparkd_' "$tmp"/readme/*.sh | head -n 1 >"$tmp/work/install.sh"
[ -s "$tmp/work/install.sh" ] || fail "README.md has no e2e command that installs ./sparkd_*.deb"
cp "$here/trixie_inside.sh" "$tmp/work/"
step "the README's build block, as the user owner (then its install command):"
sed 's/^/    /' "$tmp/work/build.sh" "$tmp/work/install.sh"

step "in the trixie tree: build, unit tests, package, install (log: inside.log)"
rc=0
tree_run --bind="$cache/trixie-apt-archives:/var/cache/apt/archives" \
        bash /srv/work/trixie_inside.sh >"$tmp/inside.log" 2>&1 || rc=$?
tree_report "trixie" "$rc"
echo "PASS: Debian 13 with only Build-Depends builds, tests, packages and installs sparkd"
