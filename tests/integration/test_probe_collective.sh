#!/usr/bin/env bash
# The collective NCCL probe over the cluster harness, on a machine without a GPU: four Sparks as a
# ring (beside a management LAN) and four on a switch. `sparkc probe --kind nccl --all` on one
# node has every member's sparkd run its rank of the real sparkd-probe-nccl, which finds no CUDA
# device: the probe ends `unavailable` within its deadline, every rank saying so itself (on the
# ring, the opposite node's start and result relayed by its neighbours), ranks in the plan's
# order, no helper left on any node, every daemon answering. Asked on a node that is not rank 0,
# and for named nodes; bad names are refused with the reason. The result is kept in the
# coordinator's history (peer "cluster"), exported by its metrics, and shown by `sparkc cluster` on
# every node, the far side of the ring too.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
[ -x "$helpers/sparkd-probe-nccl" ] || skip "sparkd-probe-nccl was not built (no CUDA runtime or NCCL found)"
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && skip "this machine has a GPU: tests/gpu/collective.sh covers it"

# collective SHAPE COORDINATOR NODE...: the collective asked on COORDINATOR over NODE... (the
# plan's members, in rank order), every rank unavailable with its own reason.
collective() {
        local shape=$1 coordinator=$2 rc=0 out start ms n
        shift 2
        start=$(date +%s%N)
        out=$(sparkc_of "$coordinator" --json probe --kind nccl --all --param min_bytes=1M --param max_bytes=1M) || rc=$?
        ms=$((($(date +%s%N) - start) / 1000000))
        echo "$shape from $coordinator: $(json_get "$out" 'd["status"]') after $ms ms: $(json_get "$out" 'd.get("error")')"
        assert_eq "$rc" 2 "$shape: sparkc's exit status"
        assert_eq "$(json_get "$out" 'd["status"]')" unavailable "$shape: status"
        assert_eq "$(json_get "$out" 'd["nranks"]')" "$#" "$shape: ranks"
        assert_eq "$(json_get "$out" '" ".join(n["name"] for n in d["nodes"])')" "$*" "$shape: ranks in the plan's order"
        assert_eq "$(json_get "$out" '" ".join(n["status"] for n in d["nodes"])')" \
                "$(for n in "$@"; do printf 'unavailable '; done | sed 's/ $//')" "$shape: every rank's status"
        for n in "$@"; do
                assert_contains "$(json_get "$out" "[x['error'] for x in d['nodes'] if x['name'] == '$n'][0]")" \
                        "no CUDA device" "$shape: $n's own reason"
                assert_eq "$(json_get "$out" "[x['last_phase'] for x in d['nodes'] if x['name'] == '$n'][0]")" \
                        cuda_init "$shape: $n's last phase"
        done
        # Far within every stage's deadline: the ranks said why at once.
        [ "$ms" -lt 20000 ] || fail "$shape: the collective took $ms ms to find no CUDA device anywhere"
        table=$(sparkc_of "$coordinator" probe --kind nccl --all --param min_bytes=1M --param max_bytes=1M) || true
        assert_contains "$table" "collective nccl across $# nodes: unavailable" "$shape: the table"
        assert_contains "$table" "no CUDA device" "$shape: the table's reasons"
        for n in "$@"; do
                cluster_wait 10 no_helper "$n" || fail "$shape: a helper is left on $n: $(pids_in_ns "${CL_NS[$n]}" 'sparkd-probe-nccl')"
                sparkc_of "$n" status >/dev/null || fail "$shape: sparkd on $n does not answer"
        done
}

no_helper() { [ -z "$(pids_in_ns "${CL_NS[$1]}" 'sparkd-probe-nccl')" ]; }

shapes=${SHAPES:-ring switch}
declare -a ring=() switch=()
cluster_job_shapes "$shapes"
cluster_start
# The memory guard reads MemAvailable under each node's host root: this machine's.
for n in "${CL_NODES[@]}"; do mkdir -p "$TEST_TMP/$n.host/proc" && cat /proc/meminfo >"$TEST_TMP/$n.host/proc/meminfo"; done

if [ ${#ring[@]} -gt 0 ]; then
        step "a ring of four: every rank says why, the opposite node through its neighbours"
        cluster_wait 90 cluster_plans_agree 4 "${ring[@]}" || fail "ring: the nodes do not agree on one plan"
        read -r -a order <<<"$(cluster_plan_of r1 '" ".join(n["name"] for n in d["nodes"])')"
        echo "ring plan: ${order[*]}"
        collective ring r1 "${order[@]}"
        step "asked on the node opposite rank 0"
        collective ring r3 "${order[@]}"
        assert_contains "$(cat "$(log_of r1)")" "collective " "r1's log"
        step "a node whose memory would not hold the buffers says so, with the numbers"
        printf 'MemTotal: 4194304 kB\nMemAvailable: 1048576 kB\n' >"$TEST_TMP/r4.host/proc/meminfo"
        out=$(sparkc_of r1 --json probe --kind nccl --all --param min_bytes=1M --param max_bytes=2G) || true
        assert_eq "$(json_get "$out" 'd["status"]')" failed "status with r4 refusing"
        assert_contains "$(json_get "$out" "[x['error'] for x in d['nodes'] if x['name'] == 'r4'][0]")" \
                "the nccl probe needs 6.0 GiB (6442450944 bytes) but this node has 1.0 GiB" "r4's reason"
        cat /proc/meminfo >"$TEST_TMP/r4.host/proc/meminfo"
        step "kept, exported and shown cluster-wide"
        hist=$(sparkc_of r3 --json history --peer cluster --kind nccl)
        assert_eq "$(json_get "$hist" '[(r["status"], r["collective"], r["nranks"]) for r in d["results"]][:1]')" \
                "[('unavailable', True, 4)]" "r3's history"
        metrics=$(sparkc_of r3 metrics)
        assert_contains "$metrics" 'sparkd_probe_ok{peer="cluster",kind="nccl"} 0' "r3's metrics"
        shows_collective() {
                local out
                out=$(sparkc_of "$1" cluster) || return 1
                [[ "$out" == *"COLLECTIVE NCCL PROBES"* && "$out" == *"r3 at "*": unavailable, 4 nodes"* &&
                        "$out" == *"ranks: ${order[0]} unavailable (cuda_init)"* ]]
        }
        cluster_wait 30 shows_collective r1 || fail "r1's sparkc cluster does not show r3's collective: $(sparkc_of r1 cluster)"
        echo "$(sparkc_of r1 cluster | sed -n '/^COLLECTIVE/,/ranks:/p')"
fi
if [ ${#switch[@]} -gt 0 ]; then
        step "four on a switch"
        cluster_wait 90 cluster_plans_agree 4 "${switch[@]}" || fail "switch: the nodes do not agree on one plan"
        read -r -a order <<<"$(cluster_plan_of s2 '" ".join(n["name"] for n in d["nodes"])')"
        collective switch s2 "${order[@]}"
        node=${switch[0]}
        step "all_gather alone is judged against the field's pass line for a switch"
        out=$(sparkc_of s1 --json probe --kind nccl --all --param ops=all_gather --param min_bytes=1M --param max_bytes=1M) || true
        assert_eq "$(json_get "$out" 'd["expected_busbw_gbytes"]')" 21.875 "the switch's pass line"
        assert_contains "$(json_get "$out" 'd["expected_source"]')" "on a switch or direct" "its source"
        step "named nodes, and names the plan does not have"
        out=$(sparkc_of "$node" --json probe --kind nccl --nodes "${order[1]},${order[3]}" --param max_bytes=1M --param min_bytes=1M) || true
        assert_eq "$(json_get "$out" '" ".join(n["name"] for n in d["nodes"])')" "${order[1]} ${order[3]}" "two named nodes"
        rc=0; err=$(sparkc_of "$node" probe --kind nccl --nodes "${order[0]},nosuch" 2>&1) || rc=$?
        [ "$rc" != 0 ] || fail "a name the plan does not have was taken"
        assert_contains "$err" "nosuch is not a node of the job plan" "its message"
        rc=0; err=$(sparkc_of "$node" probe --kind nccl --nodes "${order[0]},${order[0]}" 2>&1) || rc=$?
        assert_contains "$err" "a list of 1 to 64 node names" "a name twice"
        rc=0; err=$(sparkc_of "$node" probe --kind nccl --nodes 'a$(b)' 2>&1) || rc=$?
        assert_contains "$err" "a list of 1 to 64 node names" "a name that is no node name"
        rc=0; err=$(sparkc_of "$node" probe --kind nccl --nodes "${order[0]}" 2>&1) || rc=$?
        assert_contains "$err" "a collective needs 2 to 64 members of the job plan, not 1" "one node"
        rc=0; err=$(sparkc_of "$node" probe --kind nccl --all --param ops=broadcast 2>&1) || rc=$?
        assert_contains "$err" 'ops is one of all_reduce, all_gather, not "broadcast"' "a bad parameter"
        rc=0; err=$(sparkc_of "$node" probe --kind tcp --all 2>&1) || rc=$?
        assert_contains "$err" "give --kind nccl and no --peer" "another kind"
fi
pass
