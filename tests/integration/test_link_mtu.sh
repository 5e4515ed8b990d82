#!/usr/bin/env bash
# MTU on a managed interface is put back within a second with one mtu-corrected event; in audit
# mode the drift is only reported; a port listed as down is kept down.
. "$(dirname "$0")/lib.sh"

a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
ip -n "$a" link add fx type veth peer name fy  # an unused port
cat >"$TEST_TMP/a.conf" <<CONF
[fabric]
interfaces = fa
down = fx
[sysctl]
net.core.rmem_max =
net.core.wmem_max =
CONF

step "at start the managed interface gets MTU 9000"
ip -n "$a" link set fa mtu 1500
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
assert_eq "$(mtu_of "$a" fa)" 9000 "MTU after start"
watch_events a

step "ip link set mtu 1500 is undone within 1 s, with one event"
ip -n "$a" link set fa mtu 1500
wait_until 1 sh -c "ip -n '$a' -o link show fa | grep -q 'mtu 9000'" || fail "MTU not back at 9000 within 1 s"
wait_events a mtu-corrected fa 1 2 || fail "no mtu-corrected event"
events_final a mtu-corrected fa # the daemon has had the kernel's word on its own change
assert_eq "$(count_events a mtu-corrected fa)" 1 "mtu-corrected events"
json=$(sparkc_of a --json links)
assert_eq "$(json_get "$json" '[l["corrections"] for l in d["links"] if l["name"]=="fa"][0]')" 2 "corrections (start + once)"
assert_eq "$(json_get "$json" '[l["mtu"] for l in d["links"] if l["name"]=="fa"][0]')" 9000 "MTU in links"
assert_eq "$(json_get "$json" '"10.99.0.1/24" in [l["addresses"] for l in d["links"] if l["name"]=="fa"][0]')" True "addresses"
table=$(sparkc_of a links)
assert_contains "$table" "9000/9000" "links table"

step "a port listed as down that is set up goes down again"
assert_eq "$(ip -n "$a" -o link show fx | grep -c '<.*UP.*>' || true)" 0 "fx down at start"
ip -n "$a" link set fx up
wait_until 2 sh -c "! ip -n '$a' -o link show fx | grep -q '[<,]UP[,>]'" || fail "fx not set down again"
wait_events a admin-state-corrected fx 1 2 || fail "no admin-state-corrected event"
assert_contains "$(sparkc_of a links)" "kept down" "links table"

step "audit mode: drift stays and is reported"
sed -i '1i [daemon]\nmode = audit' "$TEST_TMP/a.conf"
sparkc_of a reload >/dev/null
ip -n "$a" link set fa mtu 1500
wait_events a mtu-drift fa 1 2 || fail "no mtu-drift event"
events_final a mtu-corrected fa
assert_eq "$(mtu_of "$a" fa)" 1500 "MTU in audit mode"
assert_eq "$(count_events a mtu-corrected fa)" 1 "mtu-corrected events in audit mode"
json=$(sparkc_of a --json links)
assert_eq "$(json_get "$json" '[l["drift"] for l in d["links"] if l["name"]=="fa"][0]')" "['mtu']" "drift"
assert_contains "$(sparkc_of a links)" "drift: mtu" "links table"

step "back to enforce: corrected on reload"
sed -i 's/mode = audit/mode = enforce/' "$TEST_TMP/a.conf"
sparkc_of a reload >/dev/null
wait_until 1 sh -c "ip -n '$a' -o link show fa | grep -q 'mtu 9000'" || fail "MTU not corrected after reload"

step "counters survive a restart"
sparkd_stop a
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
json=$(sparkc_of a --json links)
assert_eq "$(json_get "$json" '[l["corrections"] for l in d["links"] if l["name"]=="fa"][0]')" 3 "corrections after restart"
sparkd_stop a
pass
