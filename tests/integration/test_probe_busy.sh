#!/usr/bin/env bash
# A scheduled bandwidth probe never runs over a job: while iperf3 pushes traffic across the
# managed veth above [probe] busy_gbps, the scheduled tcp probe is deferred (the history shows it
# with the measured load), a probe asked for by hand runs but says the fabric was busy and is
# not judged; once the traffic stops, the scheduled probe runs at its next slot.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

command -v iperf3 >/dev/null || skip "needs iperf3"
two_probe_nodes "interval = 10s" "jitter = 0" "kinds = tcp" "duration = 1" "streams = 1" "busy_gbps = 1" \
        "[counters]" "period = 1s"
starter=$(python3 -c 'import json,sys; a=json.loads(sys.argv[1])["node_id"]; b=json.loads(sys.argv[2])["node_id"]; print("a" if a < b else "b")' \
        "$(sparkc_of a --json status)" "$(sparkc_of b --json status)")
other=$([ "$starter" = a ] && echo b || echo a)
iface=f$starter

# gbps_of NAME IFACE PYEXPR: PYEXPR holds for the throughput t the daemon shows for IFACE.
gbps_of() {
        local json
        json=$(sparkc_of "$1" --json links 2>/dev/null) || return 1
        [ "$(json_get "$json" "[bool($3) for l in d['links'] if l['name'] == '$2' for t in [l['throughput']] if t] == [True]")" = True ]
}
scheduled() { json_get "$(sparkc_of "$starter" --json history --kind tcp)" "len([r for r in d['results'] if r['scheduled'] and r['status'] == '$1'])"; }
has_scheduled() { [ "$(scheduled "$1")" -ge 1 ]; }

step "iperf3 across the veth: the fabric is busy"
ip netns exec "$b" iperf3 -s -1 >"$TEST_TMP/iperf3-server.log" 2>&1 &
DAEMON_PIDS+=("$!")
wait_until 5 ip netns exec "$b" sh -c 'ss -ltn | grep -q ":5201 "' || fail "iperf3 server not listening"
ip netns exec "$a" iperf3 -c 10.99.0.2 -t 120 -b 4G >"$TEST_TMP/iperf3-client.log" 2>&1 &
client=$!
DAEMON_PIDS+=("$client")
wait_until 10 gbps_of "$starter" "$iface" 'max(t["rx_gbps"], t["tx_gbps"]) > 1' ||
        fail "$starter does not see the traffic on $iface: $(sparkc_of "$starter" links)"
assert_contains "$(sparkc_of "$starter" links)" "GB/S RX/TX" "links table"

step "the scheduled tcp probe is deferred, with the load"
wait_until 25 has_scheduled deferred || fail "no deferred tcp probe: $(sparkc_of "$starter" history)"
# A round that started before the traffic did ran; none may start once one was deferred.
assert_eq "$(json_get "$(sparkc_of "$starter" --json history --kind tcp)" \
        'len([r for r in d["results"] if r["scheduled"] and r["status"] == "ok" and r["started_at"] >= min(x["started_at"] for x in d["results"] if x["status"] == "deferred")])')" \
        0 "scheduled tcp probes started after one was deferred"
out=$(sparkc_of "$starter" history --kind tcp)
assert_contains "$out" "deferred to the next slot: $iface carries" "history"
assert_contains "$out" "more than [probe] busy_gbps 1" "history"

step "a probe asked for by hand runs, says the fabric was busy, and is not judged"
json=$(sparkc_of "$starter" --json probe --peer "$other" --kind tcp --duration 1) || fail "tcp by hand: $json"
assert_contains "$(json_get "$json" 'd["fabric_busy"]')" "$iface carries" "fabric_busy"
assert_eq "$(json_get "$json" '"expected" in d')" False "judged against an expectation"
assert_eq "$(json_get "$json" 'd["status"]')" ok "status"

step "the traffic stops: the probe runs at its next slot"
kill "$client"
wait_until 10 gbps_of "$starter" "$iface" 'max(t["rx_gbps"], t["tx_gbps"]) < 1' || fail "the traffic does not end"
ran_before=$(scheduled ok)
ran_after() { [ "$(scheduled ok)" -gt "$ran_before" ]; }
wait_until 25 ran_after || fail "no scheduled tcp probe after the traffic: $(sparkc_of "$starter" history)"

step "a probe's own traffic is not a job: one asked for right after another is judged"
sparkc_of "$starter" --json probe --peer "$other" --kind tcp --duration 1 >/dev/null || fail "tcp by hand"
json=$(sparkc_of "$starter" --json probe --peer "$other" --kind tcp --duration 1) || fail "tcp by hand: $json"
assert_eq "$(json_get "$json" '"fabric_busy" in d')" False "fabric_busy right after a probe"
assert_eq "$(json_get "$json" '"expected" in d')" True "judged"
sparkd_stop a
sparkd_stop b
pass
