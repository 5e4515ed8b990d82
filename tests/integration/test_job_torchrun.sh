#!/usr/bin/env bash
# A real job started the way the README says, on the cluster harness: on every node
# `eval "$(sparkc env --for torchrun)"` and then `torchrun --nproc_per_node 1 torch_job.py`, and
# nothing else. Each node runs its rank in its own network namespace and its own UTS namespace
# (its own host name, as NCCL and Gloo tell hosts apart). The ranks must form one job of world
# size N whose all_reduce is correct:
# - a ring of four Sparks, each also on a management LAN (cluster_management_lan): opposite
#   nodes share no fabric subnet, so the plan puts the rendezvous and the sockets there;
# - four Sparks on a switch: one fabric subnet, the rendezvous on the fabric.
# JOB_BACKEND=gloo (default) runs on the CPU (Debian's python3-torch); JOB_BACKEND=nccl with a GPU
# runs NCCL, every rank on cuda:0 of CUDA_VISIBLE_DEVICES (tests/gpu/ sets it).
# SHAPES limits the shapes run ("ring switch" by default); FABRIC_RDMA=no declares every node's
# fabric without RDMA ([fabric] rdma = no), so the plan hands NCCL its socket transport.
# JOB_NCCL_DEBUG=1 adds NCCL's INIT and NET log to each rank's output, to show the transport.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

TORCHRUN=${TORCHRUN:-$(command -v torchrun || true)}
[ -n "$TORCHRUN" ] || skip "needs torchrun (Debian: python3-torch)"
backend=${JOB_BACKEND:-gloo}
job=$TESTS_DIR/torch_job.py
torchrun_args=(--nproc_per_node 1)
# PyTorch 1.13 (Debian 12) on Python 3.11 cannot parse its own default for --redirects and --tee
# (enum.Flag no longer lists the zero member): name a value it can.
if "$(head -1 "$TORCHRUN" | sed 's/^#!//')" -c 'import torch, sys; sys.exit(0 if torch.__version__.startswith("1.") else 1)' 2>/dev/null; then
        torchrun_args+=(--redirects 1 --tee 1)
fi

# run_job SHAPE NODE...: every node's rank as the README says, then the checks.
run_job() {
        local shape=$1 n pid rc=0 out ranks
        shift
        local -a pids=()
        cluster_wait 60 cluster_plans_agree $# "$@" || {
                for n in "$@"; do echo "$n: $(sparkc_of "$n" plan 2>&1 | head -20)"; done
                fail "$shape: the nodes do not agree on one plan of $# nodes"
        }
        echo "$shape: every node's plan: $(cluster_plan_of "$1" 'str(d["size"]) + " " + d["digest"]')"
        for n in "$@"; do
                # The job's whole set-up is the eval; the job sees nothing else of the test.
                timeout 180 ip netns exec "${CL_NS[$n]}" unshare --uts env -i PATH="$PATH" HOME="$TEST_TMP" \
                        ${CUDA_VISIBLE_DEVICES:+CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES} \
                        ${JOB_NCCL_DEBUG:+NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET} \
                        ${LD_LIBRARY_PATH:+LD_LIBRARY_PATH=$LD_LIBRARY_PATH} \
                        ${NCCL_NVLS_ENABLE:+NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE} \
                        JOB_BACKEND="$backend" SPARKC="$SPARKC" SOCK="$(sock_of "$n")" NODE="$n" \
                        TORCHRUN="$TORCHRUN" JOB="$job" ARGS="${torchrun_args[*]}" sh -c '
                        hostname "$NODE"
                        eval "$("$SPARKC" --socket "$SOCK" env --for torchrun)" || exit 3
                        exec "$TORCHRUN" $ARGS "$JOB"' >"$TEST_TMP/job-$shape-$n.out" 2>&1 &
                pids+=("$!")
        done
        for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
        for n in "$@"; do
                out=$(grep -ho '{"host".*}' "$TEST_TMP/job-$shape-$n.out" || true)
                echo "$shape $n: ${out:-no result}"
        done
        if [ "$rc" != 0 ]; then
                for n in "$@"; do
                        echo "--- $n: env --for torchrun"
                        sparkc_of "$n" env --for torchrun 2>&1 || true
                        echo "--- $n: the job"
                        tail -n 30 "$TEST_TMP/job-$shape-$n.out"
                done
                fail "$shape: a rank failed (exit $rc)"
        fi
        ranks=$(cat "$TEST_TMP"/job-"$shape"-*.out | python3 -c '
import json, sys
rows = [json.loads(l[l.index("{"):]) for l in sys.stdin if "{\"host\"" in l]
n = int(sys.argv[1])
hosts = sorted(r["host"] for r in rows)
assert sorted(r["rank"] for r in rows) == list(range(n)), "ranks %s" % sorted(r["rank"] for r in rows)
assert all(r["world"] == n for r in rows), "world sizes %s" % [r["world"] for r in rows]
assert all(r["correct"] and r["sum"] == n * (n + 1) / 2 for r in rows), "sums %s" % [r["sum"] for r in rows]
assert len(set(r["master"] for r in rows)) == 1, "rendezvous %s" % set(r["master"] for r in rows)
assert hosts == sorted(sys.argv[2:]), "hosts %s" % hosts
print("world %d, ranks 0..%d once each, all_reduce %.0f on every rank, rendezvous %s" % (n, n - 1, rows[0]["sum"], rows[0]["master"]))
' $# "$@") || fail "$shape: the job's ranks are not one correct job"
        echo "$shape: $ranks"
}

shapes=${SHAPES:-ring switch}
declare -a ring=() switch=()
cluster_job_shapes "$shapes"
if [ -n "${FABRIC_RDMA:-}" ]; then cluster_start "[fabric]" "rdma = $FABRIC_RDMA"; else cluster_start; fi

if [ ${#ring[@]} -gt 0 ]; then
        step "a ring of four: the rendezvous on the management LAN"
        run_job ring "${ring[@]}"
        grep -q "192.168.1." "$TEST_TMP/job-ring-r1.out" ||
                fail "ring: the rendezvous is not on the management LAN: $(grep -ho '"master": "[^"]*"' "$TEST_TMP/job-ring-r1.out")"
fi
if [ ${#switch[@]} -gt 0 ]; then
        step "four on a switch: the rendezvous on the fabric"
        run_job switch "${switch[@]}"
        grep -q '"master": "10.2' "$TEST_TMP/job-switch-s1.out" ||
                fail "switch: the rendezvous is not on the fabric: $(grep -ho '"master": "[^"]*"' "$TEST_TMP/job-switch-s1.out")"
fi
pass
