#!/usr/bin/env bash
# Runs inside the bookworm tree with the arm64 Build-Depends as root, for
# tests/platform/test_arm64.sh (see there), in /srv/work: sparkd/ (the source) and
# arm64-cross.ini. Every check prints "ok: ..." or "FAIL: ..." and a failure stops it.
set -euo pipefail
w=/srv/work
export LANG=C.UTF-8
step() { echo "--- $(date -u +%T) $*"; }
ok() { echo "ok:   $*"; }
fail() { echo "FAIL: $*"; exit 1; }
# The CPU time of everything run here, for the stage's budget (wall time depends on the load).
cpu_time() {
        times >/tmp/sparkd-times # in this shell: a pipe would ask a fresh subshell
        awk 'NR == 2 { print "cpu:  user " $1 ", system " $2 " (the builds and tests run here)" }' /tmp/sparkd-times
}
trap cpu_time EXIT

. /etc/os-release
ok "$PRETTY_NAME on $(dpkg --print-architecture), for arm64: $(aarch64-linux-gnu-gcc --version | head -n 1)," \
        "json-c $(aarch64-linux-gnu-pkg-config --modversion json-c), meson $(meson --version)"

step "1. cross build with warnings as errors, then the unit suite under qemu-user"
cd "$w/sparkd"
meson setup ../build-arm64 --cross-file ../arm64-cross.ini --werror -Dbuildtype=debugoptimized \
        >../setup.log 2>&1 || { tail -n 30 ../setup.log; fail "meson setup --cross-file arm64-cross.ini --werror"; }
ninja -C ../build-arm64 -j2 >../build.log 2>&1 ||
        { grep -B2 -A8 -m5 'error' ../build.log; fail "the arm64 build with warnings as errors"; }
ok "built for arm64 with --werror ($(grep -c 'Compiling' ../build.log) files compiled)"
machine=$(readelf -h ../build-arm64/daemon/sparkd | sed -n 's/^ *Machine: *//p')
[ "$machine" = AArch64 ] || fail "build-arm64/daemon/sparkd is for $machine, not AArch64"
ok "daemon/sparkd is an $machine ELF"
if meson test -C ../build-arm64 --suite unit --num-processes 2 --timeout-multiplier 4 --print-errorlogs \
        >../unit.log 2>&1; then
        ok "unit suite under qemu-user: $(grep -E '^(Ok|Fail|Skipped|Timeout):' ../unit.log | tr -s ' \n' ' ')"
        grep -E '^ *[0-9]+/[0-9]+ .* SKIP' ../unit.log | sed 's/^/    /' || true
else
        grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|SKIP)|^(Ok|Fail|Skipped|Timeout):' ../unit.log | sed 's/^/    /'
        sed -n '/Summary of Failures/q;p' ../unit.log | grep -v '^ *[0-9]*/[0-9]* ' | tail -n 40 || true
        fail "the unit suite under qemu-user"
fi

step "2. dpkg-buildpackage -aarm64 -us -uc -b"
if ! DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -aarm64 -us -uc -b >../dpkg.log 2>&1; then
        tail -n 40 ../dpkg.log
        fail "dpkg-buildpackage -aarm64 -us -uc -b (last 40 lines above)"
fi
deb=$(ls "$w"/sparkd_*_arm64.deb)
ok "built $(basename "$deb")"
[ "$(dpkg-deb -f "$deb" Architecture)" = arm64 ] || fail "$(basename "$deb") is for $(dpkg-deb -f "$deb" Architecture)"
echo "    Depends: $(dpkg-deb -f "$deb" Depends)"

step "3. the package's sparkd under qemu-user"
dpkg-deb -x "$deb" "$w/root"
machine=$(readelf -h "$w/root/usr/sbin/sparkd" | sed -n 's/^ *Machine: *//p')
[ "$machine" = AArch64 ] || fail "the package's sparkd is for $machine, not AArch64"
out=$(qemu-aarch64-static "$w/root/usr/sbin/sparkd" --check-config -c "$w/root/etc/sparkd/sparkd.conf" 2>&1) ||
        fail "sparkd --check-config under qemu-user: $out"
ok "the package's sparkd ($machine) under qemu-user: --check-config exit 0${out:+, said: $out}"
ok "$(qemu-aarch64-static "$w/root/usr/sbin/sparkd" --version)"
