#!/usr/bin/env bash
# Two nodes that find each other over mDNS only, the second a clone of the first (the same
# node-id, the same node name, as a cloned disk image has): a record with this node's id from
# another node is not taken for its own, the hello tells the two apart and both report the
# duplicate id with the fix.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_avahi.sh"
. "$(dirname "$0")/lib_peers.sh"

mdns_cable_nodes
sed -i 's/^node_name = .*/node_name = spark/' "$TEST_TMP/sparka.conf" "$TEST_TMP/sparkb.conf"
sparkd_start_avahi sparka "$a" -c "$TEST_TMP/sparka.conf"
id=$(clone_node_id sparka sparkb)
sparkd_start_avahi sparkb "$b" -c "$TEST_TMP/sparkb.conf"

step "both clones report the duplicate id"
wait_pairs duplicate-id 10 "sparka 10.77.0.2" "sparkb 10.77.0.1"
assert_contains "$(peer_field sparka 10.77.0.2 'p["error"]')" \
        "runs with this node's id $id: a cloned disk image, or two daemons on one state directory; delete $TEST_TMP/sparka.state/node-key" "a's error"
grep -q "^err: peer node spark (10.77.0.2) runs with this node's id $id" "$(log_of sparka)" || fail "nothing in a's journal"
grep -q "^err: peer node spark (10.77.0.1) runs with this node's id $id" "$(log_of sparkb)" || fail "nothing in b's journal"
sparkd_stop sparka
sparkd_stop sparkb
pass
