#!/usr/bin/env bash
# Two nodes that find each other over mDNS only, the second a clone of the first (the same
# node-id, the same node name, as a cloned disk image has): a record with this node's id from
# another node is not taken for its own, the hello tells the two apart and both report the
# duplicate id with the fix.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_avahi.sh"
. "$(dirname "$0")/lib_peers.sh"

"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.77.0.1/24 10.77.0.2/24
avahi_host "$a" sparka
avahi_host "$b" sparkb
for n in a b; do
        peer_conf "spark$n" "f$n" ""
        sed -i -e 's/^mdns = no$/mdns = yes/' -e 's/^node_name = .*/node_name = spark/' "$TEST_TMP/spark$n.conf"
done
sparkd_start_avahi sparka "$a" -c "$TEST_TMP/sparka.conf"
mkdir -p "$TEST_TMP/sparkb.state"
cp "$TEST_TMP/sparka.state/node-id" "$TEST_TMP/sparkb.state/node-id"
sparkd_start_avahi sparkb "$b" -c "$TEST_TMP/sparkb.conf"
id=$(tr -d '\n' <"$TEST_TMP/sparka.state/node-id")

step "both clones report the duplicate id"
wait_peer_state sparka 10.77.0.2 duplicate-id 10 || fail "a does not report b: $(sparkc_of sparka peers)"
wait_peer_state sparkb 10.77.0.1 duplicate-id 10 || fail "b does not report a: $(sparkc_of sparkb peers)"
assert_contains "$(peer_field sparka 10.77.0.2 'p["error"]')" \
        "runs with this node's id $id: a cloned disk image, or two daemons on one state directory; delete $TEST_TMP/sparka.state/node-id" "a's error"
grep -q "^err: peer node spark (10.77.0.2) runs with this node's id $id" "$(log_of sparka)" || fail "nothing in a's journal"
grep -q "^err: peer node spark (10.77.0.1) runs with this node's id $id" "$(log_of sparkb)" || fail "nothing in b's journal"
sparkd_stop sparka
sparkd_stop sparkb
pass
