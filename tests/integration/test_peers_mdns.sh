#!/usr/bin/env bash
# Two nodes joined by a veth, each with its own avahi-daemon and D-Bus: they find each other over
# mDNS within 5 s and reach `up`, each showing the other through the right local port. A node
# started before avahi-daemon says so once and joins when avahi-daemon comes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_avahi.sh"
. "$(dirname "$0")/lib_peers.sh"

mdns_cable_nodes --no-avahi

step "b starts before its avahi-daemon: one notice"
sparkd_start_avahi sparkb "$b" -c "$TEST_TMP/sparkb.conf"
wait_until 5 grep -q "avahi-daemon is not running" "$(log_of sparkb)" || fail "no notice about avahi-daemon"

step "a starts; b's avahi-daemon starts; they find each other within 5 s"
sparkd_start_avahi sparka "$a" -c "$TEST_TMP/sparka.conf"
avahi_daemon_start "$b"
start=$(date +%s.%N)
wait_peer_state sparka sparkb up 5 || fail "a does not see b up within 5 s: $(sparkc_of sparka peers)"
wait_peer_state sparkb sparka up 5 || fail "b does not see a up within 5 s: $(sparkc_of sparkb peers)"
took=$(python3 -c "import time,sys; print(round(time.time()-float(sys.argv[1]),2))" "$start")
echo "both up after $took s"
python3 -c "import sys; sys.exit(float(sys.argv[1]) > 5)" "$took" || fail "both up only after $took s"
for _ in $(seq 50); do [ "$(peer_field sparka sparkb 'p["discovered"]')" = True ] && break; sleep 0.1; done
assert_eq "$(peer_field sparka sparkb 'p["discovered"]')" True "a found b over mDNS"
assert_eq "$(peer_field sparkb sparka 'p["discovered"]')" True "b found a over mDNS"
assert_eq "$(peer_field sparka sparkb 'p["via"]["iface"]')" fa "a's port towards b"
assert_eq "$(peer_field sparkb sparka 'p["via"]["iface"]')" fb "b's port towards a"
assert_eq "$(peer_field sparka sparkb 'p["addresses"]')" "['10.77.0.2']" "b's fabric address from its TXT record"
assert_eq "$(grep -c 'avahi-daemon is not running' "$(log_of sparkb)")" 1 "notices about avahi-daemon"
json=$(sparkc_of sparka --json peers)
assert_eq "$(json_get "$json" 'd["mdns"]')" running "mDNS state"
sparkd_stop sparka
sparkd_stop sparkb
pass
