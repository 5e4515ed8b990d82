#!/usr/bin/env bash
# The collective NCCL probe when one rank dies, on a ring of four Sparks without a GPU. Each node's
# helper stands in for sparkd-probe-nccl on a GPU node: it speaks the helper's line protocol
# (cuda_init, buffers, then rank 0 `listening` with a unique id, the others `unique_id` and the id
# read on stdin, then comm_init) and then waits in NCCL's init as a rank whose peers are slow. It
# claims no numbers. One rank's helper is killed:
# - after the unique id is out (every rank in comm_init): the probe ends within its grace naming
#   that node and comm_init, every daemon answers, and no helper is left on any node;
# - while the ranks wait for the unique id (rank 0 never makes it): that node and unique_id.
# Each rank ran with its node's `sparkc env --for torchrun` and its rank of the plan. A caller
# that leaves (sparkc interrupted) has every rank stopped; a coordinator that dies has its
# neighbours stop their ranks at once and the far node within its silence limit.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && skip "this machine has a GPU: tests/gpu/collective.sh covers it"
mkdir "$TEST_TMP/helpers" "$TEST_TMP/ranks"
id=$(python3 -c 'print("5a" * 128)')
cat >"$TEST_TMP/helpers/sparkd-probe-nccl" <<EOF
#!/bin/bash
# Stands in for sparkd-probe-nccl on a GPU node, up to NCCL's init, where it stays.
dir=$TEST_TMP/ranks
args="\$*"
rank=0
while [ \$# -gt 0 ]; do case \$1 in --rank) rank=\$2; shift ;; esac; shift; done
echo \$\$ >"\$dir/pid.\$rank"
{ echo "ARGS \$args"; env | grep -E '^(NCCL_|MASTER_|NODE_RANK|NNODES|SPARKD_PROBE_)' | sort; } >"\$dir/env.\$rank"
echo '{"phase":"cuda_init"}'
echo '{"phase":"buffers"}'
if [ "\$rank" = 0 ]; then
        [ -e "\$dir/stall" ] && exec -a sparkd-probe-nccl-stand-in sleep 300
        echo '{"phase":"listening","nccl_id":"$id","nranks":4}'
else
        echo '{"phase":"unique_id"}'
        echo unique_id >"\$dir/waiting.\$rank"
        read -r got
        [ "\$got" = "$id" ] || { echo "wrong id: \$got" >&2; exit 3; }
fi
echo '{"phase":"comm_init"}'
echo comm_init >"\$dir/phase.\$rank"
exec -a sparkd-probe-nccl-stand-in sleep 300
EOF
chmod +x "$TEST_TMP/helpers/sparkd-probe-nccl"

cluster_ring 4 r
ring=(r1 r2 r3 r4)
cluster_management_lan "${ring[@]}"
cluster_start "[probe]" "helper_dir = $TEST_TMP/helpers"
# The memory guard reads MemAvailable under each node's host root: this machine's.
for n in "${CL_NODES[@]}"; do mkdir -p "$TEST_TMP/$n.host/proc" && cat /proc/meminfo >"$TEST_TMP/$n.host/proc/meminfo"; done
cluster_wait 90 cluster_plans_agree 4 "${ring[@]}" || fail "the nodes do not agree on one plan"
read -r -a order <<<"$(cluster_plan_of r1 '" ".join(n["name"] for n in d["nodes"])')"
echo "plan: ${order[*]}"

no_helper() { [ -z "$(pids_in_ns "${CL_NS[$1]}" 'sparkd-probe-nccl')" ]; }
in_comm_init() { for r in 0 1 2 3; do [ -e "$TEST_TMP/ranks/phase.$r" ] || return 1; done; }
waiting_for_id() { for r in 1 2 3; do [ -e "$TEST_TMP/ranks/waiting.$r" ] || return 1; done; }

# kill_rank SCENARIO RANK WAIT PHASE: starts the collective on r1, waits for WAIT, kills RANK's
# helper and checks the end.
kill_rank() {
        local scenario=$1 rank=$2 ready=$3 phase=$4 victim out start ms n pid client
        victim=${order[$rank]}
        rm -f "$TEST_TMP"/ranks/{pid,env,phase,waiting}.*
        sparkc_of r1 --json probe --kind nccl --all --param min_bytes=1M --param max_bytes=1M \
                >"$TEST_TMP/$scenario.json" 2>"$TEST_TMP/$scenario.err" &
        client=$!
        cluster_wait 60 "$ready" || fail "$scenario: the ranks did not reach the point to kill at"
        pid=$(cat "$TEST_TMP/ranks/pid.$rank")
        start=$(date +%s%N)
        kill -9 "$pid"
        wait "$client" || true
        ms=$((($(date +%s%N) - start) / 1000000))
        out=$(cat "$TEST_TMP/$scenario.json")
        echo "$scenario: $(json_get "$out" 'd["status"]') $ms ms after the kill: $(json_get "$out" 'd["error"]')"
        assert_eq "$(json_get "$out" 'd["status"]')" failed "$scenario: status"
        assert_contains "$(json_get "$out" 'd["error"]')" "rank $rank ($victim) in phase $phase: the helper was killed by signal 9" "$scenario: the error"
        assert_eq "$(json_get "$out" "d['nodes'][$rank]['status']")" failed "$scenario: the killed rank"
        [ "$ms" -lt 15000 ] || fail "$scenario: the collective ended $ms ms after the kill"
        for n in "${ring[@]}"; do
                cluster_wait 10 no_helper "$n" || fail "$scenario: a helper is left on $n: $(pids_in_ns "${CL_NS[$n]}" 'sparkd-probe-nccl')"
                sparkc_of "$n" status >/dev/null || fail "$scenario: sparkd on $n does not answer"
        done
}

step "a rank killed in NCCL's init, after the unique id is out"
kill_rank comm-init 2 in_comm_init comm_init
step "each rank ran with its node's env --for torchrun and its rank of the plan"
for r in 0 1 2 3; do
        n=${order[$r]}
        env=$(cat "$TEST_TMP/ranks/env.$r")
        want=$(sparkc_of "$n" env --for torchrun | sed -n "s/^export NCCL_SOCKET_IFNAME=//p" | tr -d "'")
        [ -n "$want" ] || fail "no NCCL_SOCKET_IFNAME in $n's env --for torchrun"
        assert_contains "$env" "NCCL_SOCKET_IFNAME=$want" "rank $r's socket interface"
        assert_contains "$env" "NODE_RANK=$r" "rank $r's node rank"
        # What the helper judges a hang by, as for a pair probe: a GB10 (the fixture) and its
        # RDMA devices.
        assert_contains "$env" "SPARKD_PROBE_UNIFIED_MEMORY=1" "rank $r's unified memory"
        assert_contains "$env" "SPARKD_PROBE_RDMA_DEVICES=roce" "rank $r's RDMA devices"
        assert_contains "$env" "--nranks 4" "rank $r's arguments"
        if [ "$r" = 0 ]; then
                assert_contains "$env" "--server" "rank 0's arguments"
        else
                assert_contains "$env" "--rank $r --id-stdin" "rank $r's arguments"
        fi
done
step "a rank killed while the ranks wait for the unique id"
touch "$TEST_TMP/ranks/stall"
kill_rank unique-id 3 waiting_for_id unique_id
rm -f "$TEST_TMP/ranks/stall"
step "rank 0, the head, killed in init"
kill_rank head 0 in_comm_init comm_init
step "the caller leaves: every rank is stopped"
rm -f "$TEST_TMP"/ranks/{pid,env,phase,waiting}.*
"$SPARKC" --socket "$(sock_of r1)" probe --kind nccl --all --param min_bytes=1M --param max_bytes=1M \
        >/dev/null 2>&1 &
client=$!
cluster_wait 60 in_comm_init || fail "the ranks did not reach NCCL's init"
kill -TERM "$client" # sparkc itself, not a subshell around it
wait "$client" || true
for n in "${ring[@]}"; do
        cluster_wait 10 no_helper "$n" || fail "a helper is left on $n after its caller left"
done
hist=$(sparkc_of r1 --json history --peer cluster --kind nccl --limit 1)
assert_contains "$(json_get "$hist" 'd["results"][0]["error"]')" "cancelled: its caller left" "the kept result"
step "the coordinator dies: its neighbours stop their ranks at once, the far node when it hears nothing"
rm -f "$TEST_TMP"/ranks/{pid,env,phase,waiting}.*
sparkc_of r2 probe --kind nccl --all --param min_bytes=1M --param max_bytes=1M >/dev/null 2>&1 &
cluster_wait 60 in_comm_init || fail "the ranks did not reach NCCL's init"
start=$(date +%s%N)
kill -KILL "$(pid_of r2)"
for n in r1 r3 r4; do
        cluster_wait 20 no_helper "$n" || fail "a helper is left on $n after its coordinator died"
        echo "$n: no helper $((($(date +%s%N) - start) / 1000000)) ms after the coordinator died"
        sparkc_of "$n" status >/dev/null || fail "sparkd on $n does not answer"
done
assert_contains "$(cat "$(log_of r4)")" "no word from the coordinator" "the far node's reason"
pass
