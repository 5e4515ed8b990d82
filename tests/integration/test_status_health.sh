#!/usr/bin/env bash
# `sparkc status` leads with the node's health: a rejected peer and a flapping link do not look
# like a healthy node, and the line names the first thing to fix and the command that shows more.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
"$SPARKC" keygen "$TEST_TMP/other.key" >/dev/null
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
# A long flap window: the link is still flapping when status is asked.
peer_conf a fa 10.99.0.2 '[fabric]' 'flap_threshold = 3' 'flap_window = 60s'
KEY_FILE=$TEST_TMP/other.key peer_conf b fb 10.99.0.1
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
watch_events a

step "a peer with another cluster key: health fail, naming it and sparkc peers"
wait_peer_state a 10.99.0.2 rejected 5 || fail "a does not reject b: $(sparkc_of a peers)"
out=$(sparkc_of a status)
assert_contains "$(head -1 <<<"$out")" "health      fail: peer 10.99.0.2 rejected" "status's first line"
assert_contains "$out" '`sparkc peers` shows more' "status"
json=$(sparkc_of a --json status)
assert_eq "$(json_get "$json" 'd["health"]["status"]')" fail "health status"
assert_eq "$(json_get "$json" 'd["health"]["command"]')" "sparkc peers" "health command"

step "a flapping link comes first: health names it and sparkc links"
flap_link "$b" fb 10
wait_events a link-flapping fa 1 5 || fail "no link-flapping alert"
out=$(sparkc_of a status)
assert_contains "$(head -1 <<<"$out")" "health      fail: link fa is flapping" "status's first line"
assert_contains "$out" '`sparkc links` shows more' "status"
assert_eq "$(json_get "$(sparkc_of a --json status)" 'd["health"]["command"]')" "sparkc links" "health command"
sparkd_stop b
sparkd_stop a
pass
