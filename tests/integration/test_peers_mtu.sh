#!/usr/bin/env bash
# An MTU that differs at the two ends of a cable is reported by both nodes, in the journal
# events, in `sparkc peers` and in the JSON.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

cable_nodes
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
wait_peer_state a b up 5 || fail "peers not up"
assert_eq "$(peer_field a b 'p["mtu"]["mismatch"]')" False "mismatch while both are 9000"

step "one end of the cable set to 4000 (b's config wants it)"
sed -i 's/^\[fabric\]$/[fabric]\nmtu = 4000/' "$TEST_TMP/b.conf"
sparkc_of b reload >/dev/null
assert_eq "$(mtu_of "$b" fb)" 4000 "b's MTU"
wait_until 5 sh -c "grep -q 'event=mtu-mismatch' '$(log_of a)'" || fail "a did not report the mismatch"
wait_until 5 sh -c "grep -q 'event=mtu-mismatch' '$(log_of b)'" || fail "b did not report the mismatch"
assert_eq "$(peer_field a b '(p["mtu"]["local"], p["mtu"]["peer"], p["mtu"]["mismatch"])')" "(9000, 4000, True)" "a's view"
assert_eq "$(peer_field b a '(p["mtu"]["local"], p["mtu"]["peer"], p["mtu"]["mismatch"])')" "(4000, 9000, True)" "b's view"
assert_contains "$(sparkc_of a peers)" "9000/4000 MISMATCH" "a's peers table"
grep "event=mtu-mismatch" "$(log_of a)" | grep -q "iface=fa mtu=9000 peer_mtu=4000 peer_iface=fb" || fail "a's event fields"

doctor=$(sparkc_of a --json doctor) || true
assert_eq "$(json_get "$doctor" '[c["status"] for c in d["checks"] if c["id"]=="peers"][0]')" fail "doctor's peers check"
assert_contains "$(sparkc_of a doctor || true)" "MTU differs at the two ends of 1 cable" "doctor"

step "agreeing again clears it"
sed -i '/^mtu = 4000$/d' "$TEST_TMP/b.conf"
sparkc_of b reload >/dev/null
wait_until 5 sh -c "grep -q 'agrees again' '$(log_of a)'" || fail "a did not see the MTU agree again"
assert_eq "$(peer_field a b 'p["mtu"]["mismatch"]')" False "mismatch after the fix"
doctor=$(sparkc_of a --json doctor) || true
assert_eq "$(json_get "$doctor" '[c["status"] for c in d["checks"] if c["id"]=="peers"][0]')" ok "doctor's peers check"
sparkd_stop a
sparkd_stop b
pass
