#!/usr/bin/env bash
# `sparkc doctor --format npd`, as node-problem-detector's custom plugin monitor runs it: one line
# of at most 80 bytes and exit 0 OK, 1 NonOK, 2 Unknown. Golden lines for a fixture Spark that is
# healthy, one that warns (the daemon's own memlock limit), one that fails (nvidia_peermem loaded
# on its unified-memory GPU) and a daemon that cannot be reached; and the probes' event rule
# (--check rail-bandwidth), which no probe has measured yet. --format line says the same without
# the cut, with the doctor's exit status.
. "$(dirname "$0")/lib.sh"

ns=$(netns_new npd)

# npd_is NAME EXIT LINE [ARGS...]: sparkc doctor --format npd ARGS prints exactly LINE, exits EXIT.
npd_is() {
        local name=$1 want_rc=$2 want=$3 rc=0 out
        shift 3
        out=$(sparkc_of "$name" doctor --format npd "$@") || rc=$?
        assert_eq "$out" "$want" "the npd line of $name $*"
        assert_eq "$rc" "$want_rc" "the npd exit status of $name $*"
        [ "$(printf %s "$out" | wc -c)" -le 80 ] || fail "the npd line of $name is above 80 bytes: $out"
}

spark_fixture_start spark "$ns" "$TEST_TMP/host"

step "ok: the checks that pass on this fixture, the probes' rule among them"
npd_is spark 0 "ok: rail-bandwidth: no tcp or rdma probe has measured the rails yet" --check rail-bandwidth
npd_is spark 0 "ok: gpu-direct: GPU Direct RDMA off (safe mode); no peermem risk" --check gpu-direct
rc=0; out=$(sparkc_of spark doctor --format line --check gpu-direct) || rc=$?
assert_eq "$out:$rc" "ok: gpu-direct: GPU Direct RDMA off (safe mode); no peermem risk:0" "the line format, ok"

step "warn: sparkd's memlock limited: OK for the condition, NonOK for a rule on that check alone"
# The daemon's limit is the test's own: a machine without one cannot make this case.
if [ "$(ulimit -l)" != unlimited ]; then
        rc=0; full=$(sparkc_of spark doctor --format line) || rc=$?
        assert_eq "$rc" 1 "the line format's exit status, warn"
        assert_contains "$full" "warn: memlock: sparkd's memlock limit is $(ulimit -l) KiB" "the line format, warn"
        [ "${#full}" -gt 80 ] || fail "the warn line fits 80 bytes, so the cut is not tried: $full"
        npd_is spark 0 "${full:0:77}..."
        npd_is spark 1 "${full:0:77}..." --check memlock
else
        echo "memlock is unlimited here: no warning to judge"
fi

step "fail: nvidia_peermem loaded on the unified-memory GB10"
cp -a "$TESTS_DIR/../fixtures/hosts/direct-fabric/sys/module/nvidia_peermem" "$TEST_TMP/host/sys/module/"
npd_is spark 1 "fail: gpu-direct: nvidia_peermem is loaded on a unified-memory GPU: NCCL init..."
rc=0; out=$(sparkc_of spark doctor --format line) || rc=$?
assert_eq "$out:$rc" "fail: gpu-direct: nvidia_peermem is loaded on a unified-memory GPU: NCCL init hangs forever with GPU Direct RDMA on (NVIDIA driver 580.95.05 (proprietary kernel module)):2" "the line format, fail"

step "unknown: no daemon at the socket, or no such check"
rc=0; out=$("$SPARKC" --socket /nonexistent/sparkd.sock doctor --format npd 2>/dev/null) || rc=$?
assert_eq "$out:$rc" "unknown: sparkd not reachable at /nonexistent/sparkd.sock:2" "npd, unreachable"
rc=0; out=$("$SPARKC" --socket /nonexistent/sparkd.sock doctor --format line 2>/dev/null) || rc=$?
assert_eq "$out:$rc" "unknown: sparkd not reachable at /nonexistent/sparkd.sock:3" "line, unreachable"
npd_is spark 2 "unknown: no check no-such-check; the checks are rdma-devices, ports-active, m..." \
        --check no-such-check
rc=0; sparkc_of spark doctor --check memlock >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 3 "--check without --format line or npd"
sparkd_stop spark
pass
