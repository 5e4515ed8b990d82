#!/usr/bin/env bash
# Benchmark: how fast sparkd puts back an MTU changed behind its back, measured 20 times from the
# `ip` command to the restored MTU and to the mtu-corrected event, next to the kernel's own
# notification latency (a bare rtnetlink listener) as the reference floor. Goal: median < 100 ms.
# Usage (root): tests/bench/mtu_correction.sh [BUILD_DIR] [TRIES]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
tries=${2:-20}
[ "$(id -u)" = 0 ] || { echo "needs root (network namespaces)"; exit 1; }

tmp=$(mktemp -d /tmp/sparkd-bench.XXXXXX)
ns=sparkd-bench-$$
pid=
cleanup() {
        [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
        ip netns del "$ns" 2>/dev/null || true
        ip netns del "$ns-peer" 2>/dev/null || true
        rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns"
ip netns add "$ns-peer"
ip link add fa netns "$ns" type veth peer name fb netns "$ns-peer"
ip -n "$ns" link set lo up
ip -n "$ns" link set fa up mtu 9000
ip -n "$ns-peer" link set fb up mtu 9000
printf '[fabric]\ninterfaces = fa\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' >"$tmp/sparkd.conf"
ip netns exec "$ns" "$build/daemon/sparkd" -f --log-target=stderr -c "$tmp/sparkd.conf" \
        --socket "$tmp/sparkd.sock" --state-dir "$tmp/state" 2>"$tmp/sparkd.log" &
pid=$!
for _ in $(seq 100); do "$build/client/sparkc" --socket "$tmp/sparkd.sock" status >/dev/null 2>&1 && break; sleep 0.05; done

ip netns exec "$ns" python3 "$here/mtu_correction_probe.py" "$tmp/sparkd.sock" fa 9000 "$tries" >"$tmp/result.json"
python3 - "$tmp/result.json" "$tries" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
rows = [
    ("ip command returned", "ip"),
    ("kernel notification (reference)", "kernel"),
    ("MTU back at 9000 (sparkd)", "restored"),
    ("mtu-corrected event (sparkd)", "event"),
]
print(f"MTU correction, {sys.argv[2]} tries, milliseconds from just before `ip link set fa mtu 1500`")
print(f"{'':34} {'median':>8} {'p90':>8} {'max':>8}")
for label, key in rows:
    v = sorted(x * 1000 for x in r[key])
    p90 = v[min(len(v) - 1, int(len(v) * 0.9))]
    print(f"{label:34} {statistics.median(v):8.2f} {p90:8.2f} {v[-1]:8.2f}")
added = statistics.median(r["restored"]) - statistics.median(r["kernel"])
ok = statistics.median(r["event"]) * 1000 < 100
print(f"sparkd adds {added * 1000:.2f} ms (median) over the kernel's notification; "
      f"goal median < 100 ms: {'met' if ok else 'NOT met'}")
sys.exit(0 if ok else 1)
PY
