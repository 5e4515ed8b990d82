#!/usr/bin/env bash
# A keyed peer floods node a: 2,000 hellos, each with a node id never seen before, then 1,000 rtt
# probe requests on one connection. The peer table keeps at most [peers] max_learned entries
# learned from hellos, dials none of them again and forgets them after [peers] forget_after; the
# configured peer stays. The probes a peer has a answer are bounded: a few run, a few more wait,
# the rest are refused naming the limits. Throughout, a's resident memory and open files stay
# bounded and its API answers root within 100 ms (p99).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

flood=${PEER_FLOOD_BIN:?PEER_FLOOD_BIN must name the peer-flood program}
helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
# A configured peer nobody answers for (10.99.0.9): kept whatever the flood does. The attacker
# speaks from b's namespace, where no sparkd runs.
peer_conf a fa 10.99.0.9 "[peers]" "max_learned = 64" "forget_after = 5s" "[probe]" "helper_dir = $helpers"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
pid=$(pid_of a)
# Under the sanitizers a hello costs several times as much, and memory and time are theirs: a
# smaller flood there checks the bounds, not the measurements.
ids=2000
is_sanitizer_build && ids=300
rss0=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
fds0=$(ls "/proc/$pid/fd" | wc -l)
echo "    before the flood: VmRSS $rss0 KiB, $fds0 open files"

step "$ids new node ids and 1,000 probe requests from one peer"
python3 "$TESTS_DIR/flood_watch.py" "$(sock_of a)" "$pid" "$TEST_TMP/stop" >"$TEST_TMP/watch.json" &
watch=$!
start=$(date +%s%N)
out=$(timeout 120 ip netns exec "$b" "$flood" 10.99.0.1 7471 "$TEST_TMP/cluster.key" "$ids" 1000 3000) ||
        fail "the flood did not run: $out"
echo "    the flood took $((($(date +%s%N) - start) / 1000000)) ms: $out"
# peer_count: how many entries a's peer table holds (its JSON may be large: read from a file).
peer_count() {
        sparkc_of a --json peers >"$TEST_TMP/peers.json"
        python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["peers"]))' "$TEST_TMP/peers.json"
}
npeers=$(peer_count)
echo "    a's peer table right after: $npeers entries"
# Redials of the attacker's address, counted for 2 s: none, nothing of it is configured.
redials=$(timeout 10 ip netns exec "$b" python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.99.0.2", 7471)); s.listen(64); s.settimeout(0.1); n = 0; end = time.monotonic() + 2
while time.monotonic() < end:
    try:
        s.accept()[0].close(); n += 1
    except socket.timeout:
        pass
print(n)')
echo "    connections a made to the attacker's address in 2 s: $redials"
touch "$TEST_TMP/stop"
wait "$watch" || fail "the watcher failed"
watch_json=$(cat "$TEST_TMP/watch.json")
echo "    during the flood: $watch_json"

assert_eq "$(json_get "$out" 'd["hellos"]')" "$ids" "hellos the daemon answered"
assert_eq "$(json_get "$out" 'd["probes_ready"] <= 4 + 16')" True "probes a started for the one peer"
assert_eq "$(json_get "$out" 'd["probes_refused"] >= 1000 - 4 - 16')" True "probe requests refused"
assert_contains "$(json_get "$out" 'd["reason"]')" "at most 64 in all, 4 per peer" "the refusal names the limits"
assert_eq "$(json_get "$out" 'd["reason"].startswith("busy: ")')" True "a refusal says busy"
assert_eq "$((npeers <= 65))" 1 "at most 64 learned entries and the configured one ($npeers)"
assert_eq "$redials" 0 "redials of the attacker"
assert_eq "$(json_get "$watch_json" 'd["failed"]')" 0 "API requests that failed during the flood"
# The daemon runs no other child here: its children are the helpers of the peer's probes.
assert_eq "$(json_get "$watch_json" 'd["children"] <= 4')" True "helpers at once (at most 4 a peer)"
assert_eq "$(json_get "$watch_json" 'd["fds"] < 512')" True "open files"
if ! is_sanitizer_build; then
        assert_eq "$(json_get "$watch_json" "d['rss_kib'] < $rss0 + 16384")" True "resident memory grew by less than 16 MiB"
        assert_eq "$(json_get "$watch_json" 'd["p99_ms"] < 100')" True "API p99 under 100 ms"
        assert_eq "$(json_get "$watch_json" 'd["max_ms"] < 100')" True "every API answer within 100 ms"
fi

step "the learned entries are forgotten, the configured peer kept"
only_static() { [ "$(peer_count)" = 1 ]; }
wait_until 15 only_static || fail "a still holds $(peer_count) peers"
assert_eq "$(peer_field a 10.99.0.9 'p["static"]')" 10.99.0.9 "the configured peer"
grep -q "forgot .* known only from a hello" "$(log_of a)" || fail "no log line says what was forgotten"
echo "    $(grep -m1 "forgot .* known only from a hello" "$(log_of a)")"
rss1=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
fds1=$(ls "/proc/$pid/fd" | wc -l)
echo "    after: VmRSS $rss1 KiB, $fds1 open files"
sparkd_stop a
pass
