#!/usr/bin/env bash
# API rate benchmark: one sparkd on a copy of the fixture Spark spark-twins, its fabric netdev in
# a namespace of its own, loaded with `status`, `metrics` and `version` in turn, each method by
# CLIENTS clients (64; metrics also by 4) on persistent connections for SECONDS (10) each, and a
# table of answers a second, p50, p99 and the slowest answer side by side. During the status run
# the fabric netdev's MTU is set to 1500 ten times and the time until sparkd put it back is
# measured as tests/bench/mtu_correction.sh does, next to the same change with no API load. The load comes from api_rate.c (one thread,
# epoll), built here with cc. Goals: status >= 20000/s at p99 <= 2 ms, metrics >= 5000/s, the
# MTU back within 10 ms.
# Usage (root): tests/bench/api_rate.sh [BUILD_DIR] [SECONDS]   (API_RATE_BIN: api_rate.c built)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
seconds=${2:-10}
. "$here/lib_bench.sh"
bench_use_build "${1:-$here/../../build}"
. "$here/../integration/lib.sh"

# API_RATE_BIN: a load generator built elsewhere, for a machine without a compiler.
if [ -n "${API_RATE_BIN:-}" ]; then
        cp "$API_RATE_BIN" "$TEST_TMP/api_rate"
else
        cc -O2 -o "$TEST_TMP/api_rate" "$here/api_rate.c" || fail "cannot build api_rate.c"
fi
ns=$(netns_new api)
host=$TEST_TMP/host
cp -a "$here/../fixtures/hosts/spark-twins" "$host"
ip -n "$ns" link add enp1s0f1np1 type veth peer name peer0
ip -n "$ns" addr add 192.168.177.11/24 dev enp1s0f1np1
ip -n "$ns" link set enp1s0f1np1 up mtu 9000
ip -n "$ns" link set peer0 up mtu 9000
"$SPARKC" keygen "$TEST_TMP/api.key" >/dev/null
printf '[daemon]\nhost_root = %s\n[fabric]\ninterfaces = enp1s0f1np1\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n[peers]\nkey_file = %s\nmdns = no\n' \
        "$host" "$TEST_TMP/api.key" >"$TEST_TMP/api.conf"
sparkd_start api "$ns" -c "$TEST_TMP/api.conf"
sparkd_caught_up api
sock=$(sock_of api)

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
# The reference: the same MTU change with no load, on this machine as loaded as it is now.
ip netns exec "$ns" python3 "$here/mtu_correction_probe.py" "$sock" enp1s0f1np1 9000 10 >"$TEST_TMP/mtu_rest.json"
load() { ip netns exec "$ns" "$TEST_TMP/api_rate" "$sock" "$1" "$2" "$seconds" >>"$TEST_TMP/rates.json"; }
: >"$TEST_TMP/rates.json"
ip netns exec "$ns" "$TEST_TMP/api_rate" "$sock" status 64 "$seconds" >>"$TEST_TMP/rates.json" &
status_pid=$!
# The MTU changes start once the status load runs, and end well within it.
clients_connected() { [ "$(ls "/proc/$(pid_of api)/fd" | wc -l)" -gt 64 ]; }
wait_until 5 clients_connected || fail "the status clients did not connect"
ip netns exec "$ns" python3 "$here/mtu_correction_probe.py" "$sock" enp1s0f1np1 9000 10 >"$TEST_TMP/mtu.json"
wait "$status_pid" || fail "the status load failed"
load metrics 4
load metrics 64
load version 64
kill -0 "$(pid_of api)" || fail "sparkd exited under load"

python3 - "$TEST_TMP/rates.json" "$TEST_TMP/mtu.json" "$TEST_TMP/mtu_rest.json" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
mtu = json.load(open(sys.argv[2]))
rest = sorted(x * 1000 for x in json.load(open(sys.argv[3]))["restored"])
print(f"{'method':9} {'clients':>7} {'answers/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'errors':>6}")
for r in rows:
    print(f"{r['method']:9} {r['clients']:7d} {r['per_sec']:10.0f} {r['p50_ms']:8.3f} {r['p99_ms']:8.3f} "
          f"{r['max_ms']:8.3f} {r['errors']:6d}")
restored = sorted(x * 1000 for x in mtu["restored"])
event = sorted(x * 1000 for x in mtu["event"])
print(f"MTU 1500 -> 9000 during the status load, {len(restored)} tries: back after median "
      f"{statistics.median(restored):.2f} ms, max {restored[-1]:.2f} ms; mtu-corrected event median "
      f"{statistics.median(event):.2f} ms, max {event[-1]:.2f} ms")
print(f"the same with no API load (reference): back after median {statistics.median(rest):.2f} ms, "
      f"max {rest[-1]:.2f} ms")
status = rows[0]
metrics = max(r["per_sec"] for r in rows if r["method"] == "metrics")
goals = [
    ("status >= 20000/s", status["per_sec"] >= 20000),
    ("status p99 <= 2 ms", status["p99_ms"] <= 2),
    ("metrics >= 5000/s", metrics >= 5000),
    ("MTU back within 10 ms (every try)", restored[-1] <= 10),
    ("no error answers", all(r["errors"] == 0 for r in rows)),
]
for name, ok in goals:
    print(f"goal {name}: {'met' if ok else 'NOT met'}")
sys.exit(0 if all(ok for _, ok in goals) else 1)
PY
