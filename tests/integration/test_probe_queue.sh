#!/usr/bin/env bash
# How a probe's life is bounded, between two daemons in two namespaces: a bandwidth probe that
# waits behind another starts its clock only when it runs (its result starts after the first
# ended, and it succeeds); a sparkc that is interrupted takes its probe with it (the helpers go,
# the history says cancelled, no probe-failed alert); a helper pair that hangs (a stand-in that
# ignores SIGTERM and never answers) is killed at the deadline the kind gives, and the result
# says so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

two_probe_nodes
watch_events a
tcp_helper_on_a() { [ -n "$(pids_in_ns "$a" 'sparkd-probe-tcp')" ]; }
no_helpers() { [ -z "$(pids_in_ns "$a" "$b" 'sparkd-probe-tcp')" ]; }

step "a queued bandwidth probe starts its clock when it runs"
sparkc_of a --json probe --peer b --kind tcp --duration 3 >"$TEST_TMP/first.json" 2>&1 &
first_pid=$!
wait_until 5 tcp_helper_on_a || fail "the first probe did not start"
out=$(sparkc_of a --json probe --peer b --kind tcp --duration 1) || fail "the queued probe: $out"
wait "$first_pid" || fail "the first probe: $(cat "$TEST_TMP/first.json")"
first=$(cat "$TEST_TMP/first.json")
assert_eq "$(json_get "$out" 'd["status"]')" ok "status of the queued probe"
# Both directions of 3 s each: the second cannot have started less than 6 s after the first.
python3 - "$first" "$out" <<'PY' || fail "the queued probe's start time counts its wait"
import json, sys, datetime
t = [datetime.datetime.strptime(json.loads(s)["started_at"], "%Y-%m-%dT%H:%M:%SZ") for s in sys.argv[1:]]
assert (t[1] - t[0]).total_seconds() >= 6, t
PY

step "an interrupted sparkc cancels its probe"
"$SPARKC" --socket "$(sock_of a)" --json probe --peer b --kind tcp --duration 20 >/dev/null 2>&1 &
caller=$! # sparkc itself, not a subshell around it
wait_until 5 tcp_helper_on_a || fail "the probe did not start"
kill -TERM "$caller"
wait "$caller" 2>/dev/null || true
t0=$(date +%s%N)
wait_until 5 no_helpers || fail "helpers still run after the caller left"
echo "helpers gone $((($(date +%s%N) - t0) / 1000000)) ms after the caller"
last=$(sparkc_of a --json history --peer b --kind tcp --limit 1)
assert_eq "$(json_get "$last" 'd["results"][0]["error"]')" "cancelled: the caller went away" "history"
assert_eq "$(count_events a probe-failed)" 0 "probe-failed alerts for a cancelled probe"
sparkc_of a status >/dev/null || fail "a stopped serving"

step "a helper pair that hangs is killed at the kind's deadline"
mkdir "$TEST_TMP/hang"
cat >"$TEST_TMP/hang/sparkd-probe-tcp" <<'SH'
#!/bin/sh
# Listens in name only, ignores SIGTERM, never finishes: only SIGKILL ends it.
trap '' TERM
case " $* " in *" --server "*) echo '{"phase":"listening","port":9}' ;; esac
exec sleep 120 # a helper that hangs: the deadline must end it
SH
chmod +x "$TEST_TMP/hang/sparkd-probe-tcp"
for n in a b; do
        o=$([ $n = a ] && echo 10.99.0.2 || echo 10.99.0.1)
        peer_conf $n f$n $o "[probe]" "helper_dir = $TEST_TMP/hang" "interval = 0" "rtt_interval = 0"
        sparkc_of $n reload >/dev/null || fail "reload of $n"
done
t0=$(date +%s)
rc=0; out=$(sparkc_of a --json probe --peer b --kind tcp --duration 1) || rc=$?
elapsed=$(($(date +%s) - t0))
echo "hung pair ended after $elapsed s"
assert_eq "$rc" 2 "exit status"
assert_eq "$(json_get "$out" 'd["status"] + " " + d["phase"]')" "failed running" "status and phase"
assert_contains "$(json_get "$out" 'd["error"]')" "did not finish in time and was killed" "reason"
# tcp, both directions of 1 s: 2 s of measuring and 15 s of set-up margin, then the 2 s the daemon
# leaves a helper to report its own timeout.
[ "$elapsed" -ge 18 ] && [ "$elapsed" -le 23 ] || fail "killed after $elapsed s, not 2 s past the 17 s deadline"
wait_until 5 no_helpers || fail "a hung helper outlived its deadline"
sparkc_of a status >/dev/null || fail "a stopped serving"
sparkc_of b status >/dev/null || fail "b stopped serving"
sparkd_stop a
sparkd_stop b
pass
