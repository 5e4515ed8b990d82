#!/usr/bin/env bash
# Three nodes in a triangle share a cluster key. One node's key_file is pointed at a new key and
# reloaded: the sessions made with the old key end at once on every side (one journal line with
# the old and new key ids), both ends show the peer rejected for its other key and probes to it
# are refused, while the two nodes that kept the key stay up. Its key set back and reloaded, the
# node is up again everywhere.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

"$SPARKC" keygen "$TEST_TMP/new.key" >/dev/null
probe_lines=("[probe]" "helper_dir = ${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}")
triangle_nodes "${probe_lines[@]}"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
sparkd_start c "$c" -c "$TEST_TMP/c.conf"

step "all three peered"
wait_pairs up 8 "a b" "a c" "b a" "b c" "c a" "c b"
old_id=$(json_get "$(sparkc_of c --json peers)" 'd["key_id"]')

step "c's key changed and reloaded: both ends reject within 5 s, a-b stays up"
KEY_FILE=$TEST_TMP/new.key peer_conf c "ca cb" "192.168.102.1 192.168.101.2" "${probe_lines[@]}"
start=$(date +%s.%N)
sparkc_of c reload >/dev/null || fail "reload of c failed"
new_id=$(json_get "$(sparkc_of c --json peers)" 'd["key_id"]')
[ "$new_id" != "$old_id" ] || fail "c still has key id $old_id after the reload"
wait_pairs rejected 5 "a c" "c a" "b c" "c b"
took=$(python3 -c "import time,sys; print(round(time.time()-float(sys.argv[1]),2))" "$start")
echo "rejected on both sides $took s after the reload"
python3 -c "import sys; sys.exit(float(sys.argv[1]) > 5)" "$took" || fail "rejected only after $took s"
for pair in "a c" "c a" "b c" "c b"; do
        set -- $pair
        assert_contains "$(peer_field "$1" "$2" 'p["error"]')" "the peer has another cluster key" "$1's error for $2"
done
assert_eq "$(peer_field a b 'p["state"]')" up "a-b, both still on the old key"
assert_eq "$(peer_field b a 'p["state"]')" up "b-a, both still on the old key"
grep -q "cluster key changed from id $old_id to id $new_id: closed 2 peer connections" "$(log_of c)" ||
        fail "no journal line on c naming the old and new key ids: $(grep -i key "$(log_of c)")"

step "probes to the node with the other key are refused"
rc=0; out=$(sparkc_of a probe --peer c --kind rtt 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "a probe to c ran: $out"
assert_contains "$out" "not up" "a's probe to c"
rc=0; out=$(sparkc_of c probe --peer a --kind rtt 2>&1) || rc=$?
[ "$rc" != 0 ] || fail "a probe from c to a ran: $out"

step "the key set back and reloaded: c up again everywhere"
peer_conf c "ca cb" "192.168.102.1 192.168.101.2" "${probe_lines[@]}"
sparkc_of c reload >/dev/null || fail "second reload of c failed"
wait_pairs up 10 "a c" "c a" "b c" "c b"
sparkc_of a probe --peer c --kind rtt >/dev/null || fail "probe a->c after the key came back"
for n in a b c; do sparkd_stop "$n"; done
pass
