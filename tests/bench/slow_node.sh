#!/usr/bin/env bash
# A slow node among many: NODES Sparks (16) on one switch of the cluster harness, with the
# packaged heartbeat (2 s) and timeout (6 s); one node's sparkd is stopped (SIGSTOP) for STOP_S
# (4) seconds every PERIOD_S (10) for DURATION_S (120), as a node whose CPUs a job takes, or a
# debugger, would stop it. While it is stopped, every other node is asked how it sees it, once a
# second. A table: per node, the TLS handshakes of the peer channel during the run against those
# of the start, and how often the stopped node read as up, slow and down.
# Goals: the others show it slow, never down; no node's handshakes rise more than 10%.
# Usage (root): tests/bench/slow_node.sh [BUILD_DIR]
#   NODES, STOP_S, PERIOD_S, DURATION_S as above.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib_bench.sh"
bench_use_build "${1:-$here/../../build}"
. "$here/../integration/lib.sh"
. "$here/../integration/lib_peers.sh"
. "$here/../integration/lib_lldp.sh"
. "$here/../integration/lib_cluster.sh"
nodes=${NODES:-16}
stop_s=${STOP_S:-4}
period_s=${PERIOD_S:-10}
duration_s=${DURATION_S:-120}

cluster_switch tor
for ((i = 1; i <= nodes; i++)); do
        cluster_node "n$i"
        cluster_plug "n$i" 0 tor
done
SPARKD_START_TIMEOUT=120 cluster_start "[peers]" "heartbeat_interval = 2s" "timeout = 6s"
others=$(for ((i = 2; i <= nodes; i++)); do echo "n$i"; done)
for n in n1 $others; do
        cluster_wait 120 cluster_peers_up "$n" $((nodes - 1)) || fail "$n: not every peer up"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"

handshakes() { json_get "$(sparkc_of "$1" --json peers)" 'd["handshakes"]'; }
declare -A before=()
for n in n1 $others; do before[$n]=$(handshakes "$n"); done

samples=$TEST_TMP/samples
: >"$samples"
# Every other node's word for n1, one line per node and look.
look() {
        local n
        for n in $others; do
                echo "$n $(peer_field "$n" n1 '"slow" if p["state"] == "up" and p["slow"] else p["state"]')" >>"$samples"
        done
}
end=$(($(date +%s) + duration_s))
while [ "$(date +%s)" -lt "$end" ]; do
        kill -STOP "$(pid_of n1)"
        stopped_until=$(($(date +%s%N) + stop_s * 1000000000))
        while [ "$(date +%s%N)" -lt "$stopped_until" ]; do
                look
                sleep 1 # one look a second at every node while n1 is stopped
        done
        kill -CONT "$(pid_of n1)"
        sleep $((period_s - stop_s)) # n1 runs for the rest of the period, as a node would between stalls
done

python3 - "$samples" "$nodes" <<'PY' >"$TEST_TMP/table"
import collections, sys
seen = collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    node, word = line.split()
    seen[node][word] += 1
for node in sorted(seen, key=lambda n: int(n[1:])):
    c = seen[node]
    print(node, c["up"], c["slow"], c["down"] + c.get("connecting", 0) + c.get("None", 0))
PY
printf '%-6s %10s %10s %7s   %s\n' node handshakes "+ in run" "rise" "n1 seen: up slow down"
worst=0
down_total=0
for n in n1 $others; do
        now=$(handshakes "$n")
        rise=$(python3 -c "print(round(100 * ($now - ${before[$n]}) / max(${before[$n]}, 1), 1))")
        line=$(grep "^$n " "$TEST_TMP/table" || echo "$n - - -")
        printf '%-6s %10s %10s %6s%%   %s\n' "$n" "${before[$n]}" "$((now - ${before[$n]}))" "$rise" "${line#"$n" }"
        worst=$(python3 -c "print(max($worst, $rise))")
        downs=$(awk '{print $4}' <<<"$line")
        [ "$downs" = - ] || down_total=$((down_total + downs))
done
echo "goal n1 never down on another node: $([ "$down_total" = 0 ] && echo met || echo "NOT met ($down_total looks)")"
echo "goal handshakes rise <= 10% on every node: $(python3 -c "print('met' if $worst <= 10 else 'NOT met (worst $worst%)')")"
for ((i = 1; i <= nodes; i++)); do sparkd_stop "n$i"; done
