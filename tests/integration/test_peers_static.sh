#!/usr/bin/env bash
# Two nodes on one cable with [peers] static and mDNS off: they come up over TLS with the cluster
# key, each through the right local port; a node with another key is rejected on both sides and
# nothing is learned from it; junk on the peer port leaves the daemon serving; a peer whose sparkd
# stops is slow, not down; one whose host stops answering is taken down by the heartbeat and comes
# back when it returns. sparkc's bash completion offers
# the peer's name.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
assert_eq "$(stat -c %a "$TEST_TMP/cluster.key")" 600 "key file mode"
rc=0; "$SPARKC" keygen "$TEST_TMP/cluster.key" 2>/dev/null || rc=$?
assert_eq "$rc" 1 "keygen refuses to overwrite"

a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
peer_conf a fa 10.99.0.2
peer_conf b fb 10.99.0.1
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"

step "both come up, each through its own port"
wait_peer_state a b up 5 || fail "a does not see b up: $(sparkc_of a peers)"
wait_peer_state b a up 5 || fail "b does not see a up: $(sparkc_of b peers)"
assert_eq "$(peer_field a b 'p["via"]["iface"]')" fa "a's local port towards b"
assert_eq "$(peer_field b a 'p["via"]["iface"]')" fb "b's local port towards a"
assert_eq "$(peer_field a b 'len(p["node_id"])')" 32 "b's node id"
assert_contains "$(sparkc_of a peers)" "up" "peers table"
grep -q "event=peer-up peer=b" "$(log_of a)" || fail "no peer-up event on a"

step "sparkc's bash completion offers the peer's name after --peer"
if [ -f /usr/share/bash-completion/bash_completion ]; then
        offered=$(PATH="$(dirname "$SPARKC"):$PATH" bash -c '
                source /usr/share/bash-completion/bash_completion
                source "$1"
                COMP_WORDS=(sparkc --socket "$2" probe --peer "")
                COMP_CWORD=5
                COMP_LINE="${COMP_WORDS[*]}"
                COMP_POINT=${#COMP_LINE}
                _sparkc sparkc "" --peer
                echo "${COMPREPLY[*]}"' _ "$TESTS_DIR/../../completion/sparkc.bash" "$(sock_of a)")
        assert_eq "$offered" b "completion of sparkc --socket A probe --peer"
else
        echo "no bash-completion here (Debian: bash-completion): completion not checked"
fi

step "a node with another key is rejected on both sides, and nothing is learned from it"
"$SPARKC" keygen "$TEST_TMP/other.key" >/dev/null
c=$(netns_new c)
veth_pair "$a" ga "$c" gc 10.98.0.1/24 10.98.0.3/24
peer_conf a "fa ga" "10.99.0.2 10.98.0.3"
sparkc_of a reload >/dev/null
KEY_FILE=$TEST_TMP/other.key peer_conf c gc 10.98.0.1
sparkd_start c "$c" -c "$TEST_TMP/c.conf"
wait_peer_state a 10.98.0.3 rejected 5 || fail "a does not reject c: $(sparkc_of a peers)"
wait_peer_state c 10.98.0.1 rejected 5 || fail "c does not reject a: $(sparkc_of c peers)"
assert_eq "$(peer_field a 10.98.0.3 'p["node_id"]')" None "c's node id learned"
assert_eq "$(peer_field a 10.98.0.3 'p["name"]')" None "c's name learned"
grep -q "event=peer-rejected" "$(log_of a)" || fail "no peer-rejected event on a"
grep -q "event=peer-rejected" "$(log_of c)" || fail "no peer-rejected event on c"
doctor=$(sparkc_of a doctor) || true
assert_contains "$doctor" "1 peer rejected: the cluster key differs" "doctor on a"
sparkd_stop c

step "random bytes, a truncated TLS hello and 1000 dropped connections leave a serving"
ip netns exec "$b" python3 "$TESTS_DIR/peer_junk.py" 10.99.0.1 7471 1000 >/dev/null || fail "junk client failed"
sparkc_of a status >/dev/null || fail "a stopped answering"
wait_peer_state a b up 3 || fail "b no longer up on a after the junk"
rejects=$(grep -c "event=peer-rejected" "$(log_of a)")
[ "$rejects" -le 6 ] || fail "$rejects peer-rejected lines for one burst of junk: not rate limited"

step "a peer whose sparkd stops (its host still acknowledging) is slow, not down, and nothing redials"
# c, stopped, would be redialled: a's handshakes then count b's alone.
peer_conf a fa 10.99.0.2
sparkc_of a reload >/dev/null
handshakes_before=$(sparkc_of a --json peers | python3 -c 'import json,sys; print(json.load(sys.stdin)["handshakes"])')
kill -STOP "$(pid_of b)"
slow_long() { [ "$(peer_field a b 'p["state"] == "up" and p["slow"] and p["silent_ms"] > 3000')" = True ]; }
wait_until 8 slow_long || fail "b not slow for 3 s (twice the timeout) on a: $(sparkc_of a --json peers)"
assert_contains "$(sparkc_of a peers)" "slow" "a's peers table while b is stopped"
grep -q "peer b is slow" "$(log_of a)" || fail "no line saying b is slow"
if grep -q "event=peer-down peer=b" "$(log_of a)"; then fail "b went down on a while only stopped"; fi
assert_eq "$(sparkc_of a metrics | grep '^sparkd_peer_slow{peer="b"}')" 'sparkd_peer_slow{peer="b"} 1' "metric"
# The cluster view says so too: b's summary ages, but b is there.
slow_in_cluster() {
        sparkc_of a --json cluster | python3 -c '
import json, sys
print([n.get("slow") for n in json.load(sys.stdin)["nodes"] if n["name"] == "b"])'
}
assert_eq "$(slow_in_cluster)" "[True]" "b in a's cluster view while stopped"
assert_contains "$(sparkc_of a cluster)" "SLOW" "a's cluster table while b is stopped"
kill -CONT "$(pid_of b)"
answers_again() { [ "$(peer_field a b 'p["state"] == "up" and not p["slow"]')" = True ]; }
wait_until 5 answers_again || fail "b still slow on a after it went on: $(sparkc_of a --json peers)"
assert_eq "$(slow_in_cluster)" "[False]" "b in a's cluster view once it answers"
handshakes_after=$(sparkc_of a --json peers | python3 -c 'import json,sys; print(json.load(sys.stdin)["handshakes"])')
assert_eq "$handshakes_after" "$handshakes_before" "a's handshakes across b's stop"

step "a peer whose host stops acknowledging is taken down by the heartbeat, and comes back"
ip -n "$b" link set fb down
wait_peer_state a b down 5 || fail "b not down on a after its port went down: $(sparkc_of a --json peers)"
grep -q "event=peer-down peer=b" "$(log_of a)" || fail "no peer-down event"
ip -n "$b" link set fb up
wait_peer_state a b up 10 || fail "b not back up on a"
wait_peer_state b a up 10 || fail "a not back up on b"
sparkd_stop a
sparkd_stop b
pass
