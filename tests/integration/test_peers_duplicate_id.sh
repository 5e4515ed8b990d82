#!/usr/bin/env bash
# Two nodes with one node id (b's state directory holds a copy of a's node-id, as a cloned disk
# image would): each sees in the other's hello its own id from another process, and says so on
# both sides, in the journal and in `sparkc peers`, with the fix. Its node-id deleted and sparkd
# restarted, b gets an id of its own and the two peer.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

cable_nodes
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
id=$(clone_node_id a b)
sparkd_start b "$b" -c "$TEST_TMP/b.conf"

step "both nodes report the duplicate node id, with the fix"
wait_pairs duplicate-id 5 "a 10.99.0.2" "b 10.99.0.1"
for pair in "a 10.99.0.2 b" "b 10.99.0.1 a"; do
        set -- $pair
        error=$(peer_field "$1" "$2" 'p["error"]')
        assert_contains "$error" "node $3 (10.99.0" "$1's error"
        assert_contains "$error" "runs with this node's id $id" "$1's error"
        assert_contains "$error" "delete $TEST_TMP/$1.state/node-key on the cloned node and restart sparkd" "$1's error"
        assert_contains "$(sparkc_of "$1" peers)" "duplicate-id" "sparkc peers on $1"
        grep -q "^err: peer node $3 .*runs with this node's id $id" "$(log_of "$1")" ||
                fail "no error in $1's journal: $(grep "node's id" "$(log_of "$1")")"
done
python3 -c '
import re, sys
lines = sys.argv[1].splitlines()
head = next(l for l in lines if l.startswith("PEER"))
row = next(l for l in lines if "duplicate-id" in l)
since = re.search(r"\d{4}-\d\d-\d\dT", row).start()
sys.exit(since != head.index("SINCE"))' "$(sparkc_of a peers)" || fail "duplicate-id pushes the columns of sparkc peers out of line"
[ "$(grep -c "runs with this node's id" "$(log_of a)")" -le 2 ] || fail "a logs the duplicate at every redial"

step "the clone's node-key deleted and sparkd restarted there: the two peer"
sparkd_stop b
rm "$TEST_TMP/b.state/node-key" "$TEST_TMP/b.state/node-id"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
wait_peer_state a b up 40 || fail "b not up on a after getting its own id: $(sparkc_of a peers)"
wait_peer_state b a up 10 || fail "a not up on b: $(sparkc_of b peers)"
[ "$(peer_field a b 'p["node_id"]')" != "$id" ] || fail "b still has a's id"
sparkd_stop a
sparkd_stop b
pass
