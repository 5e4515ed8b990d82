#!/usr/bin/env bash
# A sparkd of the build tree run under qemu-user (as a cross-built sparkd's tests run on the
# build machine) finds the probe helpers built beside it as it does natively: there
# /proc/self/exe is the emulator, not sparkd, and the daemon takes the program it was started as
# from AT_EXECFN. The emulator here is the build machine's own architecture's, which is enough
# to put the emulator in /proc/self/exe; two daemons run that way measure rtt between them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
qemu=qemu-$(uname -m)-static
command -v "$qemu" >/dev/null || skip "needs $qemu (Debian qemu-user-static)"
is_sanitizer_build && skip "sparkd is a sanitizer build (ASan's shadow memory does not fit under qemu-user)"

kind_field() {
        json_get "$(sparkc_of "$1" --json probe-kinds)" "[$3 for k in d[\"kinds\"] if k[\"name\"] == \"$2\"][0]"
}

printf '#!/bin/sh\nexec %s %s "$@"\n' "$(command -v "$qemu")" "$SPARKD" >"$TEST_TMP/sparkd-qemu"
chmod +x "$TEST_TMP/sparkd-qemu"
SPARKD=$TEST_TMP/sparkd-qemu
SPARKD_START_TIMEOUT=60

step "two daemons under $qemu"
two_nodes "[probe]" "interval = 0" "rtt_interval = 0"
exe=$(readlink "/proc/${DAEMON_PID_OF[a]}/exe")
assert_contains "$exe" "$qemu" "a's /proc/PID/exe"

step "probe-kinds: the build tree's helpers, available"
for n in a b; do
        for kind in rtt tcp pathmtu; do
                assert_eq "$(kind_field $n $kind 'k["helper"]')" "$helpers/sparkd-probe-$kind" "$n: $kind's helper"
                assert_eq "$(kind_field $n $kind 'k["installed"]')" True "$n: $kind available"
        done
done

step "an rtt probe between them"
out=$(sparkc_of a --json probe --peer b --kind rtt 2>&1) || fail "rtt probe a -> b failed: $out"
assert_eq "$(json_get "$out" 'd["status"]')" ok "rtt status a -> b"
pass
