#!/usr/bin/env bash
# What `sparkc peers` says when peering cannot work: with no key file, why peering is off and
# what to do, not just "OFF"; with a peer holding another key, that it has another cluster key
# and how to copy the key, OpenSSL's words at most a detail at the end.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

a=$(netns_new a)
c=$(netns_new c)
veth_pair "$a" fa "$c" fc 10.99.0.1/24 10.99.0.3/24
peer_conf a fa 10.99.0.3
sparkd_start a "$a" -c "$TEST_TMP/a.conf"

step "no key file: the peers reply and sparkc say why peering is off and what to do"
json=$(sparkc_of a --json peers)
assert_eq "$(json_get "$json" 'd["peering"]')" False "peering without a key"
reason=$(json_get "$json" 'd["off_reason"]')
assert_contains "$reason" "$TEST_TMP/cluster.key" "off_reason"
assert_contains "$reason" "copy the cluster key of a node already in the cluster" "off_reason"
assert_contains "$reason" "sparkc keygen $TEST_TMP/cluster.key" "off_reason"
out=$(sparkc_of a peers)
assert_contains "$out" "peering OFF: cannot open $TEST_TMP/cluster.key: No such file or directory: copy" "sparkc peers"
assert_contains "$out" "then \`sparkc reload\`" "sparkc peers"

step "the key made and reloaded: peering on, no reason left"
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
sparkc_of a reload >/dev/null
json=$(sparkc_of a --json peers)
assert_eq "$(json_get "$json" 'd["peering"]')" True "peering with a key"
assert_eq "$(json_get "$json" 'd["off_reason"]')" None "off_reason with peering on"

step "a peer with another key: said in words, with how to copy the key"
"$SPARKC" keygen "$TEST_TMP/other.key" >/dev/null
KEY_FILE=$TEST_TMP/other.key peer_conf c fc 10.99.0.1
sparkd_start c "$c" -c "$TEST_TMP/c.conf"
wait_peer_state a 10.99.0.3 rejected 5 || fail "a does not reject c: $(sparkc_of a peers)"
wait_peer_state c 10.99.0.1 rejected 5 || fail "c does not reject a: $(sparkc_of c peers)"
key_id=$(json_get "$(sparkc_of a --json peers)" 'd["key_id"]')
for pair in "a 10.99.0.3 cluster.key" "c 10.99.0.1 other.key"; do
        set -- $pair
        error=$(peer_field "$1" "$2" 'p["error"]')
        case $error in
        "the peer has another cluster key, or is not sparkd: "*) ;;
        *) fail "$1's error for the peer does not start by saying it has another key: $error" ;;
        esac
        assert_contains "$error" "copy $TEST_TMP/$3" "$1's error"
        assert_not_contains "$error" "error:0A" "$1's error (OpenSSL's error code)"
        assert_contains "$error" "run \`sparkc reload\` there" "$1's error"
done
assert_contains "$(peer_field a 10.99.0.3 'p["error"]')" "(key id $key_id here)" "a's error"
grep -q "rejected: the peer has another cluster key" "$(log_of a)" || fail "not in a's journal"
sparkd_stop a
sparkd_stop c
pass
