#!/usr/bin/env bash
# Taking the far end of a cable down and up gives link-down then link-up; a burst of flaps is one
# link-flapping alert and, once calm, one link-stable; flap counters survive a restart.
. "$(dirname "$0")/lib.sh"

a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
printf '[fabric]\ninterfaces = fa\nflap_threshold = 3\nflap_window = 3s\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' \
        >"$TEST_TMP/a.conf"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
watch_events a

step "far end down, then up (the kernel merges changes it has not reported, so up waits for down)"
ip -n "$b" link set fb down
wait_events a link-down fa 1 3 || fail "no link-down event"
ip -n "$b" link set fb up
wait_events a link-up fa 1 3 || fail "no link-up event"
order=$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["event"] for l in open(sys.argv[1]) if json.loads(l)["event"].startswith("link-")))' "$TEST_TMP/a.events")
assert_eq "$order" "link-down link-up" "event order"
json=$(sparkc_of a --json links)
assert_eq "$(json_get "$json" '[l["flaps"] for l in d["links"] if l["name"]=="fa"][0]')" 1 "flaps after one flap"
assert_eq "$(json_get "$json" '[l["oper_up"] for l in d["links"] if l["name"]=="fa"][0]')" True "oper_up"
sleep 3.2 # let the flap window pass so the burst below starts from calm

step "10 quick flaps: one link-flapping alert, then one link-stable"
flap_link "$b" fb 10
wait_events a link-flapping fa 1 5 || fail "no link-flapping alert"
wait_events a link-stable fa 1 10 || fail "no link-stable after the window"
events_final a link-flapping fa
events_final a link-stable fa
events_final a link-down fa
assert_eq "$(count_events a link-flapping fa)" 1 "link-flapping alerts"
assert_eq "$(count_events a link-stable fa)" 1 "link-stable events"
downs=$(count_events a link-down fa)
[ "$downs" -le 2 ] || fail "$downs link-down lines: a flapping link must not log each change"
json=$(sparkc_of a --json links)
flaps=$(json_get "$json" '[l["flaps"] for l in d["links"] if l["name"]=="fa"][0]')
[ "$flaps" -eq 11 ] || fail "flaps counted from the kernel's carrier counter: expected 11, got $flaps"
assert_eq "$(json_get "$json" '[l["flapping"] for l in d["links"] if l["name"]=="fa"][0]')" False "flapping after calm"

step "flap counters survive a restart"
sparkd_stop a
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
json=$(sparkc_of a --json links)
assert_eq "$(json_get "$json" '[l["flaps"] for l in d["links"] if l["name"]=="fa"][0]')" 11 "flaps after restart"
assert_eq "$(json_get "$json" '[l["flaps_since_start"] for l in d["links"] if l["name"]=="fa"][0]')" 0 "flaps since start"
sparkd_stop a
pass
