#!/usr/bin/env bash
# Benchmark: sparkd-probe-tcp against iperf3 over the same veth pair (two network namespaces,
# MTU 9000), with the same streams and duration, runs alternating between the two tools; the
# table shows the median of each and the ratio. Goal: sparkd-probe-tcp >= 0.95 of iperf3.
# Both report receiver-side decimal Gb/s (iperf3: end.sum_received).
# Usage (root): tests/bench/tcp_probe_vs_iperf3.sh [BUILD_DIR] [DURATION_SEC] [TRIES]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
duration=${2:-5}
tries=${3:-5}
probe=$build/probes/sparkd-probe-tcp
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 1; }
command -v iperf3 >/dev/null || { echo "needs iperf3 (apt-get install -y iperf3)"; exit 1; }
[ -x "$probe" ] || { echo "no $probe: build first (ninja -C $build)"; exit 1; }

tmp=$(mktemp -d /tmp/sparkd-bench.XXXXXX)
ns=sparkd-bench-$$
pids=()
cleanup() {
        local p
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
        ip netns del "$ns-a" 2>/dev/null || true
        ip netns del "$ns-b" 2>/dev/null || true
        rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns-a"
ip netns add "$ns-b"
ip link add ba netns "$ns-a" type veth peer name bb netns "$ns-b"
ip -n "$ns-a" addr add 10.99.0.1/24 dev ba
ip -n "$ns-b" addr add 10.99.0.2/24 dev bb
for n in a b; do
        ip -n "$ns-$n" link set lo up
        ip -n "$ns-$n" link set "b$n" up mtu 9000
done

listening() { ip netns exec "$ns-b" ss -Hltn "sport = :$1" | grep -q .; }

# iperf3 STREAMS: prints receiver Gb/s.
run_iperf3() {
        local port=5201
        ip netns exec "$ns-b" iperf3 -s -1 -B 10.99.0.2 -p "$port" >/dev/null 2>&1 &
        pids+=($!)
        for _ in $(seq 100); do listening "$port" && break; sleep 0.05; done
        ip netns exec "$ns-a" iperf3 -c 10.99.0.2 -B 10.99.0.1 -p "$port" -P "$1" -t "$duration" -J >"$tmp/iperf3.json"
        wait "${pids[-1]}" || true
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e9)' \
                "$tmp/iperf3.json"
}

# sparkd STREAMS: prints receiver Gb/s of the forward direction (client -> server), what iperf3
# measures; --one-way leaves out the reverse turn, which iperf3 does not run.
run_probe() {
        local port
        ip netns exec "$ns-b" "$probe" --server --bind 10.99.0.2 >"$tmp/server.out" 2>&1 &
        pids+=($!)
        for _ in $(seq 100); do grep -q listening "$tmp/server.out" && break; sleep 0.05; done
        port=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["port"])' "$tmp/server.out")
        ip netns exec "$ns-a" "$probe" --client 10.99.0.2 --bind 10.99.0.1 --port "$port" --streams "$1" \
                --one-way --duration "$duration" --deadline $((duration + 20)) --json >"$tmp/client.out"
        wait "${pids[-1]}" || true
        python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1])["result"]; print(r["directions"][0]["gbps"])' \
                "$tmp/client.out"
}

echo "TCP over veth (MTU 9000), ${duration} s per run, median of $tries runs each, receiver-side decimal Gb/s"
printf '%-8s %12s %18s %8s\n' streams "iperf3" "sparkd-probe-tcp" ratio
met=1
for streams in 1 4; do
        a=() b=()
        for _ in $(seq "$tries"); do
                a+=("$(run_iperf3 "$streams")")
                b+=("$(run_probe "$streams")")
        done
        read -r ia ib ratio ok < <(python3 - "${a[*]}" "${b[*]}" <<'PY'
import statistics, sys
a = statistics.median(float(x) for x in sys.argv[1].split())
b = statistics.median(float(x) for x in sys.argv[2].split())
print(f"{a:.2f} {b:.2f} {b / a:.3f} {int(b / a >= 0.95)}")
PY
)
        printf '%-8s %12s %18s %8s   (runs: iperf3 %s; sparkd %s)\n' "$streams" "$ia" "$ib" "$ratio" \
                "$(printf '%.2f ' "${a[@]}")" "$(printf '%.2f ' "${b[@]}")"
        [ "$ok" = 1 ] || met=0
done
if [ "$met" = 1 ]; then
        echo "goal (ratio >= 0.95 with 1 and 4 streams): met"
else
        echo "goal (ratio >= 0.95 with 1 and 4 streams): NOT met"
        exit 1
fi
