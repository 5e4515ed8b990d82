#!/usr/bin/env bash
# Topology benchmark: eight Sparks in a ring on the cluster harness (each node's port 0 to the
# next node's port 1, both twins), each with its own lldpd (running, as on a booted host) and its
# own sparkd. Measures, from the moment the last
# sparkd answers on its socket, how long until each node's map is the whole ring: shape ring, 8
# nodes, 8 links, every link ok. Goal: every node within 10 s. Prints a table, one row per node.
# Usage (root): tests/bench/bench_topology8.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
export SPARKD_BIN=$build/daemon/sparkd SPARKC_BIN=$build/client/sparkc
for f in "$SPARKD_BIN" "$SPARKC_BIN"; do
        [ -x "$f" ] || { echo "no $f: build first (ninja -C $build)"; exit 1; }
done
. "$here/../integration/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

n=8
goal_ms=10000
# Nodes n0..n7: the daemons start as fast as they answer, each after its lldpd.
for ((i = 0; i < n; i++)); do cluster_node "n$i"; done
for ((i = 0; i < n; i++)); do cluster_cable "n$i" 0 "n$(((i + 1) % n))" 1; done
cluster_start
start=$(date +%s%N)

# One process polls every node's topology method over its socket, all nodes each round (about
# every 50 ms), so the measure costs the daemons little and no node waits for another's poll.
python3 - "$start" "$n" "$TEST_TMP" >"$TEST_TMP/done" <<'PY'
import json, socket, sys, time
start_ns, n, tmp = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]

def topology(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect("%s/%s.sock" % (tmp, name))
        s.sendall(b'{"jsonrpc": "2.0", "id": 1, "method": "topology"}\n')
        buf = b""
        while b"\n" not in buf:
            chunk = s.recv(1 << 20)
            if not chunk:
                return None
            buf += chunk
        return json.loads(buf.partition(b"\n")[0]).get("result")
    except OSError:
        return None
    finally:
        s.close()

def complete(m):
    return (m and m.get("shape") == "ring" and len(m.get("nodes", [])) == n and len(m.get("links", [])) == n
            and all(l["state"] == "ok" for l in m["links"]))

done = {}
while len(done) < n and time.time_ns() - start_ns < 60e9:
    for i in range(n):
        name = "n%d" % i
        if name not in done and complete(topology(name)):
            done[name] = (time.time_ns() - start_ns) // 1000000
    if len(done) < n:
        time.sleep(0.05)  # the poll interval of a loop bounded by its deadline
for name, ms in done.items():
    print(name, ms)
PY
declare -A done_ms=()
while read -r name ms; do done_ms[$name]=$ms; done <"$TEST_TMP/done"

printf '%-6s %s\n' node "map complete (ms after the last sparkd answered)"
worst=0
for ((i = 0; i < n; i++)); do
        t=${done_ms[n$i]:-}
        printf '%-6s %s\n' "n$i" "${t:-not within 60 s}"
        [ -n "$t" ] || { worst=999999; continue; }
        [ "$t" -le "$worst" ] || worst=$t
done
printf 'all %d nodes: %s ms (goal %d ms)\n' $n "$worst" $goal_ms
[ "$worst" -le $goal_ms ] || fail "the map took longer than $goal_ms ms on some node"
pass
