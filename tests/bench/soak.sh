#!/usr/bin/env bash
# Soak benchmark: days of a node's life compressed into a few minutes. Two sparkd in two network
# namespaces on one cable run the schedule sped up (a bandwidth round every 10 s with the tcp,
# rdma and nccl kinds, rtt every second: with the defaults, 1 h gives one round and 12 rtt
# probes), the cable is flapped every 20 s, and a client asks status, peers, links, metrics and
# history once a second. Resident memory and open file descriptors of each daemon are sampled
# after a warm-up and then every 30 s; the table shows the first and last samples and the peak.
# Goal: flat (fds equal; RSS within a few hundred KiB once the history is full).
# Usage (root): tests/bench/soak.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd)
seconds=${2:-240}
export SPARKD_BIN=$build/daemon/sparkd SPARKC_BIN=$build/client/sparkc
export PROBE_HELPER_DIR=$build/probes
for f in "$SPARKD_BIN" "$SPARKC_BIN" "$PROBE_HELPER_DIR/sparkd-probe-tcp"; do
        [ -x "$f" ] || { echo "no $f: build first (ninja -C $build)"; exit 1; }
done
. "$here/../integration/lib.sh"
. "$here/../integration/lib_peers.sh"

# history_size = 100: the history reaches its bound within the run, so its growth stops too.
two_probe_nodes "interval = 10s" "jitter = 0" "rtt_interval = 1s" "kinds = tcp rdma nccl" "duration = 1" \
        "streams = 2" "history_size = 100" "[metrics]" "textfile = $TEST_TMP/metrics.prom"

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
fds() { ls "/proc/$1/fd" | wc -l; }
declare -A first_rss first_fds last_rss last_fds peak_rss
sample() {
        local n pid
        for n in a b; do
                pid=$(pid_of $n)
                last_rss[$n]=$(rss_kib "$pid")
                last_fds[$n]=$(fds "$pid")
                [ -n "${first_rss[$n]:-}" ] || { first_rss[$n]=${last_rss[$n]}; first_fds[$n]=${last_fds[$n]}; }
                [ "${last_rss[$n]}" -le "${peak_rss[$n]:-0}" ] || peak_rss[$n]=${last_rss[$n]}
        done
        printf '%6ds  a: %6d KiB %3d fds   b: %6d KiB %3d fds\n' $(($(date +%s) - start)) \
                "${last_rss[a]}" "${last_fds[a]}" "${last_rss[b]}" "${last_fds[b]}"
}

client_loop() {
        while :; do
                for cmd in status peers links metrics "history --limit 20"; do
                        # shellcheck disable=SC2086
                        sparkc_of a $cmd >/dev/null 2>&1 || true
                done
                sleep 1
        done
}
flap_loop() {
        while :; do
                sleep 19
                ip -n "$b" link set fb down
                sleep 1
                ip -n "$b" link set fb up
        done
}

start=$(date +%s)
client_loop &
DAEMON_PIDS+=($!)
flap_loop &
DAEMON_PIDS+=($!)
echo "warm-up 30 s (the first rounds, baselines learned, peers settled)"
sleep 30
sample
while [ $(($(date +%s) - start)) -lt "$seconds" ]; do
        sleep 30
        sample
done

kinds_of() {
        json_get "$(sparkc_of "$1" --json history --limit 1000)" \
                '"%d results (" % len(d["results"]) + ", ".join("%s %d" % kv for kv in sorted(__import__("collections").Counter(r["kind"] + " " + r["status"] for r in d["results"]).items())) + ")"'
}
flaps=$(json_get "$(sparkc_of b --json links)" 'sum(l["flaps_since_start"] for l in d["links"])')
echo
echo "soak: $seconds s, $flaps flaps of the cable (seen on b); each history is bounded at 100"
echo "history of a: $(kinds_of a)"
echo "history of b: $(kinds_of b)"
printf '%-6s %14s %14s %14s %10s %10s\n' node "RSS first KiB" "RSS last KiB" "RSS peak KiB" "fds first" "fds last"
for n in a b; do
        printf '%-6s %14d %14d %14d %10d %10d\n' "$n" "${first_rss[$n]}" "${last_rss[$n]}" "${peak_rss[$n]}" \
                "${first_fds[$n]}" "${last_fds[$n]}"
done
for n in a b; do
        sparkc_of $n status >/dev/null || fail "$n stopped answering"
done
pass
