#!/usr/bin/env bash
# The schedule runs probes by itself: an rtt round every rtt_interval (all pairs) and the tcp
# and nccl probes of the circle method's pair each interval (one after the other), started by
# the lower node id (nccl is unavailable without a GPU, and says so); results show in
# `sparkc history` on the node that started them, and in the Prometheus metrics, which
# promtool accepts. The metrics textfile is written atomically.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
for n in a b; do
        o=$([ $n = a ] && echo 10.99.0.2 || echo 10.99.0.1)
        peer_conf $n f$n $o "[probe]" "helper_dir = $helpers" "interval = 10s" "jitter = 0" "rtt_interval = 2s" \
                "duration = 1" "streams = 2" "kinds = tcp nccl" "[metrics]" "textfile = $TEST_TMP/$n.prom"
done
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
wait_peer_state a b up 5 || fail "peers not up"
starter=$(python3 -c 'import json,sys; a=json.loads(sys.argv[1])["node_id"]; b=json.loads(sys.argv[2])["node_id"]; print("a" if a < b else "b")' \
        "$(sparkc_of a --json status)" "$(sparkc_of b --json status)")
other=$([ "$starter" = a ] && echo b || echo a)

step "scheduled rtt and tcp probes appear in the history of node $starter (the lower id)"
scheduled() { json_get "$(sparkc_of "$starter" --json history --kind "$1")" 'len([r for r in d["results"] if r["scheduled"] and r["status"] == "ok"])'; }
for _ in $(seq 100); do [ "$(scheduled rtt)" -ge 1 ] && break; sleep 0.2; done
[ "$(scheduled rtt)" -ge 1 ] || fail "no scheduled rtt probe: $(sparkc_of "$starter" history)"
for _ in $(seq 150); do [ "$(scheduled tcp)" -ge 1 ] && break; sleep 0.2; done
[ "$(scheduled tcp)" -ge 1 ] || fail "no scheduled tcp probe within 30 s: $(sparkc_of "$starter" history)"
# nccl runs right after tcp in the same round: ok with GPUs, unavailable without.
nccl_done() { json_get "$(sparkc_of "$starter" --json history --kind nccl)" 'len([r for r in d["results"] if r["scheduled"] and r["status"] in ("ok", "unavailable")])'; }
for _ in $(seq 100); do [ "$(nccl_done)" -ge 1 ] && break; sleep 0.2; done
[ "$(nccl_done)" -ge 1 ] || fail "no scheduled nccl probe after the tcp one: $(sparkc_of "$starter" history)"
# pathmtu measures one direction: every node starts it, with the rtt schedule.
assert_eq "$(json_get "$(sparkc_of "$other" --json history)" 'len([r for r in d["results"] if r["kind"] != "pathmtu"])')" 0 \
        "probes other than pathmtu started by the higher id"
for n in a b; do
        assert_eq "$(json_get "$(sparkc_of "$n" --json history --kind pathmtu)" 'sorted(set((r["scheduled"], r["status"]) for r in d["results"]))')" \
                "[(True, 'ok')]" "scheduled pathmtu results of $n"
done

step "metrics pass promtool and carry the results"
command -v promtool >/dev/null || skip "needs promtool (Debian: prometheus)"
sparkc_of "$starter" metrics >"$TEST_TMP/metrics.txt"
promtool check metrics <"$TEST_TMP/metrics.txt" || fail "promtool rejects the metrics: $(cat "$TEST_TMP/metrics.txt")"
grep -q '^sparkd_probe_tcp_bytes_per_second{peer="'"$other"'"} [0-9]' "$TEST_TMP/metrics.txt" || fail "no tcp metric"
grep -q '^sparkd_peer_up{peer="'"$other"'"} 1' "$TEST_TMP/metrics.txt" || fail "no peer metric"
grep -q '^sparkd_link_mtu_bytes{iface="f'"$starter"'"} 9000' "$TEST_TMP/metrics.txt" || fail "no link metric"
wait_until 20 test -s "$TEST_TMP/$starter.prom" || fail "no textfile written"
promtool check metrics <"$TEST_TMP/$starter.prom" || fail "promtool rejects the textfile"
sparkd_stop a
sparkd_stop b
pass
