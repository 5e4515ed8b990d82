#!/usr/bin/env bash
# The collective NCCL probe against a torchrun job on a machine with one GPU (root): four sparkd
# on the cluster harness, each in its own network and UTS namespace (NCCL tells the four ranks on
# the one GPU apart as four hosts), as a switch and as a ring of four beside a management LAN.
# In each shape, ROUNDS rounds, alternating which goes first:
#  - `sparkc probe --kind nccl --all` on the head: one rank of sparkd-probe-nccl per node, with
#    the plan's environment, all_reduce at every size of SIZES;
#  - the same all_reduce sizes in a torchrun job, each node started as the README says
#    (`eval "$(sparkc env --for torchrun)"; torchrun --nproc_per_node 1 ...`) in the same
#    namespaces (tests/gpu/torch_allreduce_bench.py, timed as the helper times);
# then one rank's helper killed once rank 0's unique id is out: the probe must end naming that
# node, every daemon answer and no helper be left. Prints a table of the medians of busbw per
# shape and size and their ratio (the goal: within 5%), and writes it with every raw result
# under OUT_DIR. NCCL_NVLS_ENABLE=0 throughout: NVLink multicast can take a shared host's GPUs out
# of service. Without a GPU it runs all the same, each step ending "no CUDA device".
#
# Usage: tests/gpu/collective.sh [OUT_DIR]          (default ./collective-gpu-results)
#   SPARKD_BIN, SPARKC_BIN  the binaries (default: sparkd and sparkc on PATH)
#   PROBE_HELPER_DIR        where sparkd-probe-nccl is (default: the directory of sparkd)
#   CUDA_VISIBLE_DEVICES    the GPU every rank uses (default 0)
#   TORCHRUN                torchrun (default: on PATH)
#   SHAPES                  "switch ring" (default) or one of them
#   SIZES                   all_reduce sizes, K/M/G suffixes (default "64M 256M")
#   ROUNDS                  rounds of each (default 3)
#   ITERS, WARMUP           timed and warm-up iterations per size (default 20 and 1)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out_dir=$(mkdir -p "${1:-$PWD/collective-gpu-results}" && cd "${1:-$PWD/collective-gpu-results}" && pwd)
export SPARKD_BIN=${SPARKD_BIN:-$(command -v sparkd || true)}
export SPARKC_BIN=${SPARKC_BIN:-$(command -v sparkc || true)}
export PROBE_HELPER_DIR=${PROBE_HELPER_DIR:-$(dirname "$SPARKD_BIN")}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0} NCCL_NVLS_ENABLE=0
TORCHRUN=${TORCHRUN:-$(command -v torchrun || true)}
rounds=${ROUNDS:-3} iters=${ITERS:-20} warmup=${WARMUP:-1} shapes=${SHAPES:-switch ring}
. "$here/../integration/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"
set +e
[ -x "$PROBE_HELPER_DIR/sparkd-probe-nccl" ] || fail "no $PROBE_HELPER_DIR/sparkd-probe-nccl"
[ -n "$TORCHRUN" ] || fail "needs torchrun"
work=$TEST_TMP/results
mkdir -p "$work"
log() { echo "$*" | tee -a "$work/run.log"; }
save() {
        cp "$TEST_TMP"/*.log "$work/" 2>/dev/null || true
        tar -C "$work" -czf "$out_dir/results.tar.gz" . 2>/dev/null || true
        cp "$work/run.log" "$work/table.txt" "$out_dir/" 2>/dev/null || true
}
trap 'rc=$?; save; (exit $rc); cleanup' EXIT

bytes() {
        case $1 in
        *K) echo $((${1%K} << 10)) ;; *M) echo $((${1%M} << 20)) ;; *G) echo $((${1%G} << 30)) ;; *) echo "$1" ;;
        esac
}
size_list=""
for s in ${SIZES:-64M 256M}; do size_list="$size_list $(bytes "$s")"; done
size_list=$(tr ' ' '\n' <<<"$size_list" | grep . | sort -n | tr '\n' ' ' | sed 's/ $//')
min=$(awk '{print $1}' <<<"$size_list")
max=$(awk '{print $NF}' <<<"$size_list")
torchrun_args=(--nproc_per_node 1)
if "$(head -1 "$TORCHRUN" | sed 's/^#!//')" -c 'import torch, sys; sys.exit(0 if torch.__version__.startswith("1.") else 1)' 2>/dev/null; then
        torchrun_args+=(--redirects 1 --tee 1)
fi
{
        nvidia-smi -L 2>/dev/null || echo "nvidia-smi: no GPU listed"
        echo "helper: $PROBE_HELPER_DIR/sparkd-probe-nccl"
        ldd "$PROBE_HELPER_DIR/sparkd-probe-nccl" | grep -E 'nccl|cudart' || true
        echo "sizes: $size_list; rounds $rounds, iters $iters, warm-up $warmup; CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"
} | tee -a "$work/run.log"

# collective SHAPE ROUND HEAD: the collective on HEAD; its JSON in collective-SHAPE-ROUND.json.
collective() {
        local f=$work/collective-$1-$2.json
        sparkc_of "$3" --json probe --kind nccl --all --param ops=all_reduce --param min_bytes="$min" \
                --param max_bytes="$max" --param step_factor=2 --param iters="$iters" \
                --param warmup_iters="$warmup" --env NCCL_NVLS_ENABLE=0 >"$f" 2>"$f.err"
        log "$1 round $2 collective: $(python3 - "$f" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("no result: %s" % e); sys.exit()
print(d["status"], d.get("busbw_gbytes", ""), d.get("error") or "",
      "(NCCL %s)" % ",".join(sorted({n.get("nccl_version") or "?" for n in d.get("nodes", [])})))
PY
)"
}

# torchrun_job SHAPE ROUND NODE...: the benchmark as a torchrun job on every node; rank 0's line
# (or each rank's error) in torchrun-SHAPE-ROUND-NODE.out.
torchrun_job() {
        local shape=$1 round=$2 n pid
        shift 2
        local -a pids=()
        for n in "$@"; do
                timeout 900 ip netns exec "${CL_NS[$n]}" unshare --uts env -i PATH="$PATH" HOME="$TEST_TMP" \
                        CUDA_VISIBLE_DEVICES="$CUDA_VISIBLE_DEVICES" NCCL_NVLS_ENABLE=0 \
                        ${LD_LIBRARY_PATH:+LD_LIBRARY_PATH=$LD_LIBRARY_PATH} \
                        BENCH_SIZES="$(tr ' ' ',' <<<"$size_list" | sed 's/,$//')" BENCH_ITERS="$iters" BENCH_WARMUP="$warmup" \
                        SPARKC="$SPARKC" SOCK="$(sock_of "$n")" NODE="$n" TORCHRUN="$TORCHRUN" \
                        JOB="$here/torch_allreduce_bench.py" ARGS="${torchrun_args[*]}" sh -c '
                        hostname "$NODE"
                        eval "$("$SPARKC" --socket "$SOCK" env --for torchrun)" || exit 3
                        exec "$TORCHRUN" $ARGS "$JOB"' >"$work/torchrun-$shape-$round-$n.out" 2>&1 &
                pids+=("$!")
        done
        for pid in "${pids[@]}"; do wait "$pid"; done
        log "$shape round $round torchrun: $(cat "$work"/torchrun-"$shape"-"$round"-*.out | grep -ho '{"host".*}' | python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin]
ok = [r for r in rows if "sizes" in r]
if ok:
    print("ok", " ".join("%d:%.3f" % (s["bytes"], s["busbw"]) for s in ok[0]["sizes"]), "(NCCL %s)" % ok[0].get("nccl", "?"))
else:
    print("failed", "; ".join(sorted(set(r.get("error", "?") for r in rows))) or "no result")')"
}

no_helper() { [ -z "$(pids_in_ns "${CL_NS[$1]}" 'sparkd-probe-nccl')" ]; }

# kill_rank SHAPE HEAD VICTIM NODE...: a collective whose VICTIM helper is killed once the id is out.
kill_rank() {
        local shape=$1 head=$2 victim=$3 client pid out n
        shift 3
        local mark
        mark=$(grep -c "unique id sent" "$(log_of "$head")")
        sparkc_of "$head" --json probe --kind nccl --all --param ops=all_reduce --param min_bytes="$max" \
                --param max_bytes="$max" --param iters=200 --env NCCL_NVLS_ENABLE=0 >"$work/kill-$shape.json" 2>&1 &
        client=$!
        id_out_or_ended() { ! kill -0 "$client" 2>/dev/null || [ "$(grep -c 'unique id sent' "$(log_of "$head")")" -gt "$mark" ]; }
        cluster_wait 120 id_out_or_ended
        if [ "$(grep -c 'unique id sent' "$(log_of "$head")")" -le "$mark" ]; then
                wait "$client"
                log "$shape kill: the unique id never went out: $(json_get "$(cat "$work/kill-$shape.json")" 'd.get("error")')"
                return
        fi
        pid=$(pids_in_ns "${CL_NS[$victim]}" 'sparkd-probe-nccl' | head -1)
        [ -n "$pid" ] && kill -9 "$pid"
        wait "$client"
        out=$(cat "$work/kill-$shape.json")
        log "$shape kill of $victim's rank: $(json_get "$out" 'd["status"] + ": " + str(d.get("error"))')"
        assert_contains "$(json_get "$out" 'd.get("error") or ""')" "($victim) in phase" "$shape: the kill names the node"
        for n in "$@"; do
                cluster_wait 30 no_helper "$n" || fail "$shape: a helper is left on $n"
                sparkc_of "$n" status >/dev/null || fail "$shape: sparkd on $n does not answer"
        done
        log "$shape kill: no helper left on any node, every daemon answers"
}

CL_UTS=1
declare -a ring=() switch=()
cluster_job_shapes "$shapes"
cluster_start "[probe]" "helper_dir = $PROBE_HELPER_DIR"
# The memory guard reads MemAvailable under each node's host root: this machine's.
for n in "${CL_NODES[@]}"; do mkdir -p "$TEST_TMP/$n.host/proc" && cat /proc/meminfo >"$TEST_TMP/$n.host/proc/meminfo"; done

for shape in $shapes; do
        if [ "$shape" = ring ]; then nodes=("${ring[@]}"); else nodes=("${switch[@]}"); fi
        cluster_wait 120 cluster_plans_agree 4 "${nodes[@]}" || fail "$shape: the nodes do not agree on one plan"
        read -r -a order <<<"$(cluster_plan_of "${nodes[0]}" '" ".join(n["name"] for n in d["nodes"])')"
        log "=== $shape: plan ${order[*]}, plane $(cluster_plan_of "${nodes[0]}" 'd["plane"]')"
        for ((round = 1; round <= rounds; round++)); do
                if ((round % 2)); then
                        collective "$shape" "$round" "${order[0]}"
                        torchrun_job "$shape" "$round" "${order[@]}"
                else
                        torchrun_job "$shape" "$round" "${order[@]}"
                        collective "$shape" "$round" "${order[0]}"
                fi
        done
        kill_rank "$shape" "${order[0]}" "${order[2]}" "${order[@]}"
done

python3 - "$work" "$size_list" $shapes <<'PY' | tee "$work/table.txt"
import glob, json, os, re, statistics, sys
work, sizes, shapes = sys.argv[1], [int(s) for s in sys.argv[2].split()], sys.argv[3:]
def collective(shape):
    got, why = {s: [] for s in sizes}, set()
    for f in sorted(glob.glob(os.path.join(work, "collective-%s-*.json" % shape))):
        try:
            d = json.load(open(f))
        except Exception:
            why.add("no result"); continue
        if d.get("status") not in ("ok", "degraded"):
            why.add("no CUDA device" if d.get("status") == "unavailable" else d.get("error") or d.get("status")); continue
        for s in d["ops"][0]["sizes"]:
            if s["bytes"] in got:
                got[s["bytes"]].append(s["busbw"])
    return got, why
def torchrun(shape):
    got, why = {s: [] for s in sizes}, set()
    for r in sorted({re.sub(r"-[^-]*\.out$", "", f) for f in glob.glob(os.path.join(work, "torchrun-%s-*.out" % shape))}):
        rows = []
        for f in glob.glob(r + "-*.out"):
            for line in open(f, errors="replace"):
                if line.startswith('{"host"') or '{"host"' in line:
                    rows.append(json.loads(line[line.index("{"):]))
        ok = [x for x in rows if "sizes" in x]
        if not ok:
            why.add("; ".join(sorted({x.get("error", "?") for x in rows})) or "no result"); continue
        for s in ok[0]["sizes"]:
            if s["bytes"] in got:
                got[s["bytes"]].append(s["busbw"])
    return got, why
print("%-7s %10s %26s %26s %7s" % ("shape", "size", "collective busbw GB/s", "torchrun busbw GB/s", "ratio"))
within, measured = True, False
for shape in shapes:
    c, cw = collective(shape)
    t, tw = torchrun(shape)
    for s in sizes:
        cm = statistics.median(c[s]) if c[s] else None
        tm = statistics.median(t[s]) if t[s] else None
        cs = "%.2f (median of %d)" % (cm, len(c[s])) if cm else (", ".join(sorted(cw)) or "none")[:26]
        ts = "%.2f (median of %d)" % (tm, len(t[s])) if tm else (", ".join(sorted(tw)) or "none")[:26]
        ratio = "%.3f" % (cm / tm) if cm and tm else "-"
        if cm and tm:
            measured = True
            within = within and abs(cm / tm - 1) <= 0.05
        print("%-7s %9dM %26s %26s %7s" % (shape, s >> 20, cs, ts, ratio))
print("goal: collective within 5%% of torchrun: %s" % (("yes" if within else "NO") if measured else "not measured"))
PY
log "raw results and logs: $out_dir/results.tar.gz"
