#!/usr/bin/env bash
# Three nodes in a triangle, each cable its own subnet (seed 003): every node has both peers up,
# each through the port on that peer's subnet; cutting one cable takes only that peer down, and
# restoring it brings it back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

triangle_nodes
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
sparkd_start c "$c" -c "$TEST_TMP/c.conf"

step "every node sees both peers up, each through the right port"
for pair in "a b ab" "a c ac" "b a ba" "b c bc" "c a ca" "c b cb"; do
        set -- $pair
        wait_peer_state "$1" "$2" up 8 || fail "$1 does not see $2 up: $(sparkc_of "$1" peers)"
        assert_eq "$(peer_field "$1" "$2" 'p["via"]["iface"]')" "$3" "$1's port towards $2"
done

step "cutting the a-c cable takes only that peer down"
ip -n "$a" link set ac down
wait_peer_state a c down 5 || fail "c not down on a"
wait_peer_state c a down 5 || fail "a not down on c"
assert_eq "$(peer_field a b 'p["state"]')" up "a-b while a-c is cut"
assert_eq "$(peer_field b c 'p["state"]')" up "b-c while a-c is cut"

step "restoring it brings the peer back"
ip -n "$a" link set ac up
wait_peer_state a c up 15 || fail "c not back on a: $(sparkc_of a peers)"
wait_peer_state c a up 15 || fail "a not back on c"
assert_eq "$(peer_field a c 'p["via"]["iface"]')" ac "a's port towards c after the repair"
for n in a b c; do sparkd_stop "$n"; done
pass
