#!/usr/bin/env bash
# The nccl probe on a machine with two GPUs, end to end, in one run (root):
#  1. two sparkd in two network namespaces joined by a veth, one GPU each (CUDA_VISIBLE_DEVICES),
#     run `sparkc probe --kind nccl` with NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 (NCCL's network
#     transport: TCP sockets over the veth) and without them (whatever NCCL picks);
#  2. a benchmark: sparkd-probe-nccl run by hand as two processes, and nccl-tests' all_reduce_perf
#     (-g 2, both GPUs in one process), in the same namespace with the same variables, sizes
#     (256 MiB, 1 GiB), iterations (-n 20 -w 1) and data (float sum, out of place), rounds
#     alternating, over NVLink (P2P) and over NCCL's socket transport on the same interface; the
#     ratio of the medians of busbw at each size;
#  3. hangs: a communicator init given less time than it needs, and a peer whose helper is
#     stopped once it has handed out its unique id; each must end with "hang in
#     ncclCommInitRank" while both daemons keep serving; and by hand, the helper told it runs on
#     a GB10 with GPU Direct RDMA allowed names the cause and the fix;
#  4. an expectation the link cannot meet raises one probe-degraded alert.
# Prints one table and writes it with the raw results under OUT_DIR (table.txt, results.tar.gz).
# Without a GPU it runs all the same: every probe ends "no CUDA device" (unavailable).
#
# Usage: tests/gpu/nccl_two_daemons.sh [OUT_DIR]
#   SPARKD_BIN, SPARKC_BIN   the binaries (default: sparkd and sparkc on PATH)
#   PROBE_HELPER_DIR         where sparkd-probe-* are (default: the directory of sparkd)
#   ALL_REDUCE_PERF          an all_reduce_perf binary (nccl-tests, built without MPI); the
#                            comparison is skipped without it
#   ROUNDS                   benchmark rounds of each tool (default 3)
#   BENCH_BUDGET_SEC         no new round after this many seconds of benchmark (default 240)
#   BENCH_PATHS              which paths the benchmark compares (default "p2p socket"); the
#                            socket transport varies most from round to round and may want
#                            every round a run can spend
# NVLink multicast stays off everywhere (NCCL_NVLS_ENABLE=0): it can take a shared host's GPUs
# out of service.
set -euo pipefail
out_dir=$(mkdir -p "${1:-$PWD/nccl-gpu-results}" && cd "${1:-$PWD/nccl-gpu-results}" && pwd)
export SPARKD_BIN=${SPARKD_BIN:-$(command -v sparkd || true)}
export SPARKC_BIN=${SPARKC_BIN:-$(command -v sparkc || true)}
helpers=${PROBE_HELPER_DIR:-$(dirname "$SPARKD_BIN")}
rounds=${ROUNDS:-3}
arp=${ALL_REDUCE_PERF:-}
export NCCL_NVLS_ENABLE=0
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../integration/lib_peers.sh"
NCCL=$helpers/sparkd-probe-nccl
[ -x "$NCCL" ] || fail "no $NCCL"
command -v pgrep >/dev/null || fail "needs pgrep"
work=$TEST_TMP/results
mkdir -p "$work"
log() { echo "$*" | tee -a "$work/run.log"; }

save() {
        cp "$TEST_TMP"/*.log "$work/" 2>/dev/null || true
        tar -C "$work" -czf "$out_dir/results.tar.gz" . 2>/dev/null || true
        cp "$work/run.log" "$out_dir/run.log" 2>/dev/null || true
}
trap 'rc=$?; save; (exit $rc); cleanup' EXIT

{
        nvidia-smi -L || echo "nvidia-smi: none"
        nvidia-smi topo -m 2>/dev/null || true
        echo "helper: $NCCL"
        ldd "$NCCL" | grep -E 'nccl|cudart' || true
        [ -z "$arp" ] || { echo "all_reduce_perf: $arp"; ldd "$arp" | grep -E 'nccl|cudart' || true; }
} >"$work/machine.txt" 2>&1
cat "$work/machine.txt"

"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24

# ---- 1. two daemons, one GPU each ----
for n in a b; do
        o=$([ $n = a ] && echo 10.99.0.2 || echo 10.99.0.1)
        peer_conf $n f$n $o "[probe]" "helper_dir = $helpers" "interval = 0" "rtt_interval = 0"
done
CUDA_VISIBLE_DEVICES=0 sparkd_start a "$a" -c "$TEST_TMP/a.conf"
CUDA_VISIBLE_DEVICES=1 sparkd_start b "$b" -c "$TEST_TMP/b.conf"
wait_peer_state a b up 10 || fail "peers not up"

# probe NAME ARGS...: sparkc probe --kind nccl from a to b; the JSON result in NAME.json.
probe() {
        local name=$1 rc=0 start
        shift
        start=$(date +%s.%N)
        sparkc_of a --json probe --peer b --kind nccl --env NCCL_NVLS_ENABLE=0 "$@" >"$work/$name.json" 2>"$work/$name.err" ||
                rc=$?
        log "$name: exit $rc after $(python3 -c "import time,sys; print(round(time.time()-float(sys.argv[1]),1))" "$start") s"
}

log "--- daemons: network transport (P2P and SHM off), 1 MiB to 1 GiB, x4"
probe daemons_net --param max_bytes=1G --param step_factor=4 --env NCCL_P2P_DISABLE=1 --env NCCL_SHM_DISABLE=1
log "--- daemons: NCCL's own choice"
probe daemons_default --param max_bytes=1G --param step_factor=4
# Two namespaces on one host: NCCL sees one host and picks P2P, whose cuMem handles travel over
# abstract unix sockets, which a network namespace does not share; legacy CUDA IPC does not
# need them.
log "--- daemons: NCCL's own choice with legacy CUDA IPC (NCCL_CUMEM_ENABLE=0)"
probe daemons_legacy_ipc --param max_bytes=1G --param step_factor=4 --env NCCL_CUMEM_ENABLE=0
sparkc_of a probe --peer b --kind nccl --env NCCL_NVLS_ENABLE=0 --env NCCL_P2P_DISABLE=1 \
        --env NCCL_SHM_DISABLE=1 --param max_bytes=64M >"$work/table_example.txt" 2>&1 || true
cat "$work/table_example.txt"

# ---- 3. hangs ----
log "--- hang: init given 1 ms"
probe hang_deadline --param init_timeout_ms=1 --param max_bytes=1M --env NCCL_P2P_DISABLE=1 --env NCCL_SHM_DISABLE=1
log "--- hang: the peer's helper stopped after handing out its unique id"
(probe hang_stopped --param init_timeout_ms=5000 --param max_bytes=1M --env NCCL_P2P_DISABLE=1 \
        --env NCCL_SHM_DISABLE=1) &
prober=$!
stopped=
# The client helper starts only once the peer's listening line (with the id) came back.
for _ in $(seq 300); do
        if pgrep -f '[s]parkd-probe-nccl.*--client' >/dev/null; then
                stopped=$(pgrep -f '[s]parkd-probe-nccl.*--server' || true)
                [ -z "$stopped" ] || kill -STOP $stopped
                break
        fi
        kill -0 "$prober" 2>/dev/null || break
        sleep 0.05
done
wait "$prober" || true
log "stopped server helper: ${stopped:-none}"
[ -z "$stopped" ] || kill -CONT $stopped 2>/dev/null || true
alive=yes
sparkc_of a status >/dev/null 2>&1 || alive="a: no"
sparkc_of b status >/dev/null 2>&1 || alive="$alive b: no"
wait_until 10 sh -c "! pgrep -f '[s]parkd-probe-nccl' >/dev/null" && left=none || left=$(pgrep -af '[s]parkd-probe-nccl' || true)
echo "$alive" >"$work/alive.txt"
echo "$left" >"$work/left.txt"

# ---- 4. an expectation the link cannot meet ----
for n in a b; do
        sed -i 's/^\[probe\]$/[probe]\nexpect_nccl_busbw = 5000/' "$TEST_TMP/$n.conf"
        sparkc_of $n reload >/dev/null
done
probe degraded --param max_bytes=16M --env NCCL_P2P_DISABLE=1 --env NCCL_SHM_DISABLE=1
grep -c 'event=probe-degraded' "$(log_of a)" >"$work/degraded_alerts.txt" || true
sparkc_of a history --peer b --kind nccl >"$work/history.txt" 2>&1 || true
sparkc_of a metrics 2>/dev/null | grep -i nccl >"$work/metrics.txt" || true
sparkd_stop a
sparkd_stop b

# ---- 2. the benchmark: same namespace, same GPUs, same variables ----
# socket: NCCL's network transport over fa (both ranks in ns a: the kernel's local path);
# p2p: NVLink between the GPUs (SHM off, so P2P or nothing). NCCL's INFO log of every run is kept
# to show the paths each tool's channels took.
declare -A bench_env=(
        [socket]="NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_SOCKET_IFNAME==fa"
        [p2p]="NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_SOCKET_IFNAME==fa"
)
sizes=(--min-bytes 256M --max-bytes 1G --step-factor 4 --iters 20 --warmup-iters 1 --op all_reduce)
helper_pair() {
        local t=$1 i=$2 id server
        # shellcheck disable=SC2086 # the variables are words
        env ${bench_env[$t]} CUDA_VISIBLE_DEVICES=0 ip netns exec "$a" "$NCCL" --json --server --bind 10.99.0.1 \
                "${sizes[@]}" >"$work/pair_${t}_server_$i.out" 2>&1 &
        server=$!
        wait_until 60 grep -q -e '"nccl_id"' -e '"result"' "$work/pair_${t}_server_$i.out" || true
        id=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if "nccl_id" in d: print(d["nccl_id"])' "$work/pair_${t}_server_$i.out" 2>/dev/null || true)
        if [ -n "$id" ]; then
                # shellcheck disable=SC2086
                env ${bench_env[$t]} CUDA_VISIBLE_DEVICES=1 SPARKD_PROBE_NCCL_ID=$id ip netns exec "$a" "$NCCL" \
                        --json --client 10.99.0.1 --bind 10.99.0.1 "${sizes[@]}" >"$work/pair_${t}_client_$i.out" 2>&1 ||
                        true
        fi
        wait "$server" || true
}
for t in ${BENCH_PATHS:-p2p socket}; do
        bench_start=$(date +%s)
        for i in $(seq "$rounds"); do
                if [ "$i" -gt 1 ] && [ $(($(date +%s) - bench_start)) -gt "${BENCH_BUDGET_SEC:-240}" ]; then
                        log "--- benchmark $t: no time for round $i (BENCH_BUDGET_SEC)"
                        break
                fi
                log "--- benchmark $t round $i: sparkd-probe-nccl, two processes"
                helper_pair "$t" "$i"
                if [ -n "$arp" ]; then
                        log "--- benchmark $t round $i: all_reduce_perf -g 2"
                        # shellcheck disable=SC2086
                        env ${bench_env[$t]} NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET \
                                NCCL_DEBUG_FILE="$work/arp_${t}_$i.nccl" CUDA_VISIBLE_DEVICES=0,1 \
                                ip netns exec "$a" "$arp" -b 256M -e 1G -f 4 -g 2 -n 20 -w 1 -c 1 \
                                >"$work/arp_${t}_$i.txt" 2>&1 || true
                fi
        done
done

# ---- 3b. the diagnosis a GB10 node would get, by hand: the facts are told, the hang is real ----
# This H200 host has no unified memory; the helper is told it has (as sparkd would on a GB10),
# with GPU Direct RDMA allowed, and its peer stops after handing out the unique id.
log "--- hang by hand with a GB10's facts (unified memory, GDR allowed)"
gb10_env="NCCL_NVLS_ENABLE=0 NCCL_SOCKET_IFNAME==fa NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_NET_GDR_LEVEL=SYS NCCL_DMABUF_ENABLE=0 SPARKD_PROBE_UNIFIED_MEMORY=1"
# shellcheck disable=SC2086
env $gb10_env CUDA_VISIBLE_DEVICES=0 ip netns exec "$a" "$NCCL" --json --server --bind 10.99.0.1 --max-bytes 1M \
        --init-timeout-ms 3000 >"$work/gb10_server.out" 2>&1 &
gb10_server=$!
wait_until 60 grep -q -e '"nccl_id"' -e '"result"' "$work/gb10_server.out" || true
kill -STOP "$gb10_server" 2>/dev/null || true
id=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    d = json.loads(l)
    if "nccl_id" in d: print(d["nccl_id"])' "$work/gb10_server.out" 2>/dev/null || true)
if [ -n "$id" ]; then
        # shellcheck disable=SC2086
        env $gb10_env CUDA_VISIBLE_DEVICES=1 SPARKD_PROBE_NCCL_ID=$id ip netns exec "$a" "$NCCL" --json \
                --client 10.99.0.1 --bind 10.99.0.1 --max-bytes 1M --init-timeout-ms 3000 \
                >"$work/gb10_client.out" 2>&1 || true
fi
kill -KILL "$gb10_server" 2>/dev/null || true
wait "$gb10_server" 2>/dev/null || true

# ---- the table ----
python3 - "$work" "$rounds" <<'PY' | tee "$out_dir/table.txt"
import glob, json, os, re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
MiB, GiB = 1 << 20, 1 << 30

def load(name):
    try:
        return json.load(open(os.path.join(work, name + ".json")))
    except Exception as e:
        return {"status": "no result", "error": str(e)}

def result_of(path):
    try:
        for line in open(path):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if "result" in d:
                return d["result"]
    except OSError:
        pass
    return None

def busbw_at(ops, size, op="all_reduce"):
    for o in ops or []:
        if o.get("op") == op:
            for s in o.get("sizes", []):
                if s.get("bytes") == size:
                    return s.get("busbw")
    return None

def fmt(v):
    return "-" if v is None else "%.2f" % v

def transport(m):
    t = (m or {}).get("transport") or {}
    return "%s %s" % (t.get("network") or "?", ",".join(t.get("paths") or []) or "?")

def paths_in_log(path):
    found = set()
    try:
        for line in open(path):
            m = re.search(r" via (\S+)", line)
            if m and " NCCL INFO Channel" in line:
                found.add("/".join(m.group(1).split("/")[:2]))
    except OSError:
        pass
    return ",".join(sorted(found)) or "?"

print("== 1. sparkc probe --kind nccl between two daemons (GPU 0 in ns a, GPU 1 in ns b, veth fa-fb) ==")
print("%-20s %-10s %-18s %9s %9s %9s %9s  %s" % ("run", "status", "transport", "AR 256M", "AR 1G", "AG 256M", "AG 1G", "phases ms / error"))
for name in ("daemons_net", "daemons_default", "daemons_legacy_ipc", "degraded"):
    r = load(name)
    m = r.get("measured") or r.get("detail") or {}
    ph = m.get("phases_ms") or {}
    extra = " ".join("%s=%s" % (k, ph[k]) for k in ("cuda_init", "comm_init", "warmup", "timed") if k in ph)
    if r.get("error"):
        extra = r["error"][:140]
    ops = m.get("ops")
    print("%-20s %-10s %-18s %9s %9s %9s %9s  %s" % (name, r.get("status"), transport(m), fmt(busbw_at(ops, 256 * MiB)),
          fmt(busbw_at(ops, GiB)), fmt(busbw_at(ops, 256 * MiB, "all_gather")), fmt(busbw_at(ops, GiB, "all_gather")), extra))
r = load("degraded")
print("expectation 5000 GB/s (config): status %s, measured %s GB/s, expected %s (%s); probe-degraded alerts in a's log: %s" % (
    r.get("status"), (r.get("measured") or {}).get("busbw_gbytes"), (r.get("expected") or {}).get("value"),
    (r.get("expected") or {}).get("source"), open(os.path.join(work, "degraded_alerts.txt")).read().strip()))

print()
print("== 2. benchmark: all_reduce busbw GB/s, float sum, out of place, 20 timed + 1 warm-up iterations, GPUs 0 and 1, ns a ==")
print("   sparkd-probe-nccl: two processes (CUDA_VISIBLE_DEVICES=0 and 1); all_reduce_perf: one process, -g 2")
for t, env in (("p2p", "NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_SOCKET_IFNAME==fa"),
               ("socket", "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_NVLS_ENABLE=0 NCCL_SOCKET_IFNAME==fa")):
    ours = {256 * MiB: [], GiB: []}
    theirs = {256 * MiB: [], GiB: []}
    our_paths, their_paths = set(), set()
    for i in range(1, rounds + 1):
        res = result_of(os.path.join(work, "pair_%s_client_%d.out" % (t, i))) or result_of(os.path.join(work, "pair_%s_server_%d.out" % (t, i)))
        if res and res.get("ok"):
            our_paths.add(transport(res))
            for size in ours:
                v = busbw_at(res.get("ops"), size)
                if v is not None:
                    ours[size].append(v)
        elif res:
            print("   %s helper round %d: %s" % (t, i, res.get("error")))
        p = os.path.join(work, "arp_%s_%d.txt" % (t, i))
        if os.path.exists(p):
            their_paths.add(paths_in_log(os.path.join(work, "arp_%s_%d.nccl" % (t, i))))
            for line in open(p):
                f = line.split()
                if len(f) >= 12 and not line.lstrip().startswith("#") and f[0].isdigit() and int(f[0]) in theirs:
                    theirs[int(f[0])].append(float(f[7]))   # out-of-place busbw
    print("-- %s: %s" % (t, env))
    print("   paths: sparkd-probe-nccl %s; all_reduce_perf %s" % (" ".join(sorted(our_paths)) or "?", " ".join(sorted(their_paths)) or "?"))
    print("   %-8s %-36s %-36s %7s" % ("size", "sparkd-probe-nccl, rounds", "all_reduce_perf, rounds", "ratio"))
    for size in (256 * MiB, GiB):
        a, b = ours[size], theirs[size]
        ratio = statistics.median(a) / statistics.median(b) if a and b else None
        print("   %-8s %-36s %-36s %7s" % ("256 MiB" if size == 256 * MiB else "1 GiB", " ".join(fmt(v) for v in a) or "-",
                                         " ".join(fmt(v) for v in b) or "-", "-" if ratio is None else "%.3f" % ratio))
print("(ratio: median of sparkd-probe-nccl's rounds / median of all_reduce_perf's; goal within 3%)")

print()
print("== 3. hangs ==")
for name in ("hang_deadline", "hang_stopped"):
    r = load(name)
    d = (r.get("detail") or {}).get("diagnosis") or {}
    print("%-14s status %-8s %s" % (name, r.get("status"), (r.get("error") or "")[:160]))
    if d:
        print("               diagnosis: hang_in=%s phase=%s waited_s=%s cause=%s" % (d.get("hang_in"), d.get("phase"), d.get("waited_s"), d.get("cause")))
print("daemons serving after the hangs: %s; helpers left: %s" % (open(os.path.join(work, "alive.txt")).read().strip(),
                                                                  open(os.path.join(work, "left.txt")).read().strip()))
res = result_of(os.path.join(work, "gb10_client.out"))
if res:
    d = res.get("diagnosis") or {}
    print("by hand, told it is a GB10 (unified memory, NCCL_NET_GDR_LEVEL=SYS, NCCL_DMABUF_ENABLE=0), peer stopped:")
    print("   error: %s" % res.get("error"))
    print("   cause: %s" % d.get("cause"))
    print("   fix:   %s" % d.get("fix"))
PY
log "done"
pass
