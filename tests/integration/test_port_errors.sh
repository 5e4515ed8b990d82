#!/usr/bin/env bash
# The counter watch in a running daemon, its host root a fixture Spark port whose counter files
# this test rewrites as the kernel would: a fatal counter that rises gives one port-errors event
# for the episode, a rate past its threshold one more, a reset none; the metrics carry the
# counters and pass promtool; the doctor fails the port with the fix.
. "$(dirname "$0")/lib.sh"

fixture_host port-errors "$TEST_TMP/host"
counters=$TEST_TMP/host/sys/class/infiniband/rocep1s0f1/ports/1/counters
printf '[daemon]\nhost_root = %s\n[counters]\nperiod = 1s\nwindow = 10s\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' \
        "$TEST_TMP/host" >"$TEST_TMP/a.conf"
a=$(netns_new a)
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
watch_events a

# counter_is NAME VALUE: the daemon's last look saw the counter at VALUE.
counter_is() {
        sparkc_of a metrics | grep -qx "sparkd_port_errors_total{device=\"rocep1s0f1\",port=\"1\",iface=\"enp1s0f1np1\",counter=\"$1\"} $2"
}

step "the metrics carry the counters and pass promtool"
sparkc_of a metrics >"$TEST_TMP/metrics.txt"
assert_contains "$(cat "$TEST_TMP/metrics.txt")" "# TYPE sparkd_port_errors_total counter" "metrics"
assert_contains "$(cat "$TEST_TMP/metrics.txt")" 'sparkd_port_bytes_total{device="rocep1s0f1",port="1",iface="enp1s0f1np1",direction="rx"} 912345678901' "metrics"
counter_is symbol_error 1200 || fail "metrics lack symbol_error 1200: $(cat "$TEST_TMP/metrics.txt")"
if command -v promtool >/dev/null; then
        promtool check metrics <"$TEST_TMP/metrics.txt" || fail "promtool rejects the metrics"
fi

step "link_downed rises: one port-errors event, and none more within the episode"
echo 1 >"$counters/link_downed"
wait_events a port-errors enp1s0f1np1 1 10 || fail "no port-errors event for link_downed"
echo 2 >"$counters/link_downed"
wait_until 10 counter_is link_downed 2 || fail "the daemon did not see link_downed 2"
events_final a port-errors enp1s0f1np1
assert_eq "$(count_events a port-errors enp1s0f1np1)" 1 "port-errors events after two rises"
json=$(sed -n 1p "$TEST_TMP/a.events")
assert_eq "$(json_get "$json" 'd["fields"]["counter"]')" link_downed "counter"
assert_eq "$(json_get "$json" 'd["fields"]["severity"]')" fatal "severity"
assert_contains "$(json_get "$json" 'd["fields"]["action"]')" "reseat the cable" "action"

step "symbol_error past 10/s: one more event"
echo 100000 >"$counters/symbol_error"
wait_events a port-errors enp1s0f1np1 2 10 || fail "no port-errors event for symbol_error"
json=$(sed -n 2p "$TEST_TMP/a.events")
assert_eq "$(json_get "$json" 'd["fields"]["counter"]')" symbol_error "counter"
assert_eq "$(json_get "$json" 'd["fields"]["threshold"]')" 10 "threshold"

step "a reset (the counters fall) gives no event"
echo 0 >"$counters/symbol_error"
echo 0 >"$counters/link_downed"
wait_until 10 counter_is symbol_error 0 || fail "the daemon did not see the reset"
events_final a port-errors enp1s0f1np1
assert_eq "$(count_events a port-errors enp1s0f1np1)" 2 "port-errors events after the reset"

step "the doctor shows the readings"
rc=0; out=$(sparkc_of a doctor) || rc=$?
assert_contains "$out" "port-counters" "doctor"
assert_contains "$out" "rocep1s0f1 port 1 (enp1s0f1np1): " "doctor"
sparkd_stop a
pass
