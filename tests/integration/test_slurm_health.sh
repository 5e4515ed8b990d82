#!/usr/bin/env bash
# A real one-node Slurm (slurmctld, slurmd, munge) in a namespace of its own, whose slurmd runs
# sparkd-slurm-health as its HealthCheckProgram against a sparkd on a fixture Spark: a fabric fault
# (nvidia_peermem loaded on a unified-memory GPU) drains the node with a "sparkd:" reason, the fix
# resumes it, a node drained by hand for another reason stays drained with that reason, and an
# unreachable sparkd leaves the node as it was (with --drain-unreachable it drains). A step that
# expects no change waits for two more health-check runs after its change: one may have started
# before it.
. "$(dirname "$0")/lib.sh"

for p in slurmctld slurmd munged mungekey scontrol; do
        command -v "$p" >/dev/null || skip "needs $p (Debian slurmctld, slurmd, munge)"
done
HEALTH=$TESTS_DIR/../../integrations/slurm/sparkd-slurm-health
node=sparknode
gone() { ! kill -0 "$1" 2>/dev/null; }
# stop_process PID: ends a process of this test and waits until it is gone, so nothing writes
# into the test's folder while cleanup removes it.
stop_process() {
        kill -TERM "$1" 2>/dev/null || return 0
        wait_until 15 gone "$1" || kill -KILL "$1"
}
ns=$(netns_new slurm)

step "a sparkd on a copy of a healthy fixture Spark"
spark_fixture_start spark "$ns" "$TEST_TMP/host"
rc=0; sparkc_of spark doctor >/dev/null || rc=$?
[ "$rc" -le 1 ] || fail "the doctor of the healthy fixture exits $rc: $(sparkc_of spark doctor --format line || true)"

step "munge and a one-node Slurm whose health program talks to that sparkd"
mkdir -p "$TEST_TMP/munge" "$TEST_TMP/slurm/spool" "$TEST_TMP/slurm/state"
mungekey --create --keyfile="$TEST_TMP/munge/munge.key"
chown -R munge:munge "$TEST_TMP/munge"
chmod 755 "$TEST_TMP/munge"
su -s /bin/sh munge -c "munged --key-file=$TEST_TMP/munge/munge.key --socket=$TEST_TMP/munge/munge.sock \
        --pid-file=$TEST_TMP/munge/munged.pid --log-file=$TEST_TMP/munge/munged.log \
        --seed-file=$TEST_TMP/munge/munged.seed"
CLEANUP_CMDS+=("stop_process \$(cat $TEST_TMP/munge/munged.pid)")
# The wrapper slurmd runs: the health program with this test's sparkc and socket, then a line in
# runs, which the steps count as their barrier.
socket_file=$TEST_TMP/socket
export SLURM_CONF=$TEST_TMP/slurm/slurm.conf
sock_of spark >"$socket_file"
options_file=$TEST_TMP/options
: >"$options_file"
# slurmd runs it with an environment of its own: SLURM_CONF is this test's, for scontrol.
cat >"$TEST_TMP/health.sh" <<HEALTH
#!/bin/sh
export SLURM_CONF=$TEST_TMP/slurm/slurm.conf
"$HEALTH" --sparkc "$SPARKC" --socket "\$(cat $socket_file)" --timeout 5 \$(cat $options_file) >>"$TEST_TMP/health.log" 2>&1
echo "\$?" >>"$TEST_TMP/runs"
HEALTH
chmod 755 "$TEST_TMP/health.sh"
: >"$TEST_TMP/runs"
cat >"$SLURM_CONF" <<CONF
ClusterName=sparks
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$TEST_TMP/munge/munge.sock
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SlurmdSpoolDir=$TEST_TMP/slurm/spool
StateSaveLocation=$TEST_TMP/slurm/state
SlurmctldPidFile=$TEST_TMP/slurm/slurmctld.pid
SlurmdPidFile=$TEST_TMP/slurm/slurmd.pid
SlurmctldLogFile=$TEST_TMP/slurm/slurmctld.log
SlurmdLogFile=$TEST_TMP/slurm/slurmd.log
HealthCheckProgram=$TEST_TMP/health.sh
HealthCheckInterval=1
ReturnToService=2
NodeName=$node NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=100 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
# nsenter, not ip netns exec: that mounts a sysfs of the namespace's own, which hides the cgroup
# file system slurmd needs.
nsenter --net="/run/netns/$ns" slurmctld -D -i >>"$TEST_TMP/slurmctld.out" 2>&1 &
CLEANUP_CMDS+=("stop_process $!")
nsenter --net="/run/netns/$ns" slurmd -D -N "$node" >>"$TEST_TMP/slurmd.out" 2>&1 &
CLEANUP_CMDS+=("stop_process $!")

scontrol_ns() { nsenter --net="/run/netns/$ns" timeout 20 scontrol "$@"; }
node_field() { scontrol_ns show node "$node" | sed -n "s/^[[:space:]]*$1=//p" | head -n 1; }
node_state() { node_field State | cut -d' ' -f1; }
node_reason() { node_field Reason | sed 's/ \[[^]]*\]$//'; }
state_is() { [[ "$(node_state)" =~ $1 ]]; }
runs() { wc -l <"$TEST_TMP/runs"; }
runs_reach() { [ "$(runs)" -ge "$1" ]; }
# two_more_runs: returns once the health program has ended twice since the call.
two_more_runs() {
        local at
        at=$(runs)
        wait_until 60 runs_reach $((at + 2)) ||
                fail "the health program did not run twice in 60 s: $(cat "$TEST_TMP/health.log")"
}
if ! wait_until 60 state_is '^IDLE$'; then
        tail -n 20 "$TEST_TMP/slurm/slurmctld.log" "$TEST_TMP/slurm/slurmd.log" "$TEST_TMP"/*.out >&2 || true
        fail "the node is not idle within 60 s: $(scontrol_ns show node "$node" 2>&1)"
fi
two_more_runs
assert_eq "$(node_state)" IDLE "a healthy node's state"

step "a fabric fault: nvidia_peermem loaded on the unified-memory GB10 drains the node"
cp -a "$TESTS_DIR/../fixtures/hosts/direct-fabric/sys/module/nvidia_peermem" "$TEST_TMP/host/sys/module/"
wait_until 30 state_is DRAIN || fail "not drained: $(scontrol_ns show node "$node"); $(cat "$TEST_TMP/health.log")"
reason=$(node_reason)
assert_contains "$reason" "sparkd: gpu-direct: " "the drain reason"
assert_contains "$reason" "nvidia_peermem" "the drain reason"
assert_contains "$(nsenter --net="/run/netns/$ns" timeout 20 sinfo -R -h -o '%E')" "sparkd: gpu-direct" "sinfo -R"

step "unreachable while drained by sparkd: the node stays drained with its reason"
echo "$TEST_TMP/none.sock" >"$socket_file"
two_more_runs
state_is DRAIN || fail "the node left DRAIN while sparkd was unreachable: $(node_state)"
assert_eq "$(node_reason)" "$reason" "the reason while sparkd is unreachable"
sock_of spark >"$socket_file"
options_file=$TEST_TMP/options
: >"$options_file"

step "the fault fixed: the node resumes"
rm -r "$TEST_TMP/host/sys/module/nvidia_peermem"
wait_until 30 state_is '^IDLE$' || fail "not resumed: $(scontrol_ns show node "$node")"

step "unreachable while healthy: the node stays idle"
echo "$TEST_TMP/none.sock" >"$socket_file"
two_more_runs
assert_eq "$(node_state)" IDLE "the state while sparkd is unreachable"
assert_contains "$(cat "$TEST_TMP/health.log")" "left as it is" "the health program's words"
sock_of spark >"$socket_file"
options_file=$TEST_TMP/options
: >"$options_file"

step "unreachable with --drain-unreachable: drained, and resumed once sparkd answers healthy"
echo "--drain-unreachable" >"$options_file"
echo "$TEST_TMP/none.sock" >"$socket_file"
wait_until 30 state_is DRAIN || fail "not drained while unreachable: $(scontrol_ns show node "$node")"
assert_eq "$(node_reason)" "sparkd: unknown: sparkd not reachable at $TEST_TMP/none.sock" "the drain reason"
sock_of spark >"$socket_file"
wait_until 30 state_is '^IDLE$' || fail "not resumed: $(scontrol_ns show node "$node")"
: >"$options_file"

step "drained by hand for another reason: the health program leaves it, failing or healthy"
scontrol_ns update NodeName="$node" State=DRAIN Reason="disk replaced"
cp -a "$TESTS_DIR/../fixtures/hosts/direct-fabric/sys/module/nvidia_peermem" "$TEST_TMP/host/sys/module/"
two_more_runs
state_is DRAIN || fail "the hand-drained node left DRAIN: $(node_state)"
assert_eq "$(node_reason)" "disk replaced" "the administrator's reason, with a fault"
rm -r "$TEST_TMP/host/sys/module/nvidia_peermem"
two_more_runs
state_is DRAIN || fail "the hand-drained node was resumed: $(node_state)"
assert_eq "$(node_reason)" "disk replaced" "the administrator's reason, healthy"
assert_eq "$(sort -u "$TEST_TMP/runs")" 0 "the health program's exit statuses"

sparkd_stop spark
pass
