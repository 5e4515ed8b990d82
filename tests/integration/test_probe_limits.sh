#!/usr/bin/env bash
# The bounds a user meets, three nodes in a triangle: a node already in a bandwidth probe refuses
# a third node's with the reason (and the caller gets exit 2), but its own probe queued behind the
# one it answers runs once both ends are done; the history keeps only
# history_size results, also after a restart; sparkc's live progress line appears on a terminal
# and never in a pipe.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
command -v script >/dev/null || skip "needs script (util-linux) for a terminal"
triangle_nodes "helper_dir = $helpers"
echo "history_size = 10" >>"$TEST_TMP/a.conf"
for n in a b c; do sparkd_start $n "${!n}" -c "$TEST_TMP/$n.conf"; done
for pair in "a b" "c b"; do
        set -- $pair
        wait_peer_state "$1" "$2" up 10 || fail "$1 does not see $2 up"
done
tcp_helper_on_b() { [ -n "$(pids_in_ns "$b" 'sparkd-probe-tcp')" ]; }

step "a node busy with a bandwidth probe refuses another node's, with the reason"
sparkc_of a --json probe --peer b --kind tcp --duration 4 >"$TEST_TMP/ab.json" 2>&1 &
ab=$!
wait_until 5 tcp_helper_on_b || fail "the a-b probe did not start"
rc=0
out=$(sparkc_of c --json probe --peer b --kind tcp --duration 1) || rc=$?
assert_eq "$rc" 2 "exit status of a refused probe"
assert_eq "$(json_get "$out" 'd["status"]')" failed "status of the refused probe"
assert_contains "$(json_get "$out" 'd["error"]')" "the peer refused: busy: a tcp probe with a is running" "reason"
wait "$ab" || fail "the a-b probe: $(cat "$TEST_TMP/ab.json")"
assert_eq "$(json_get "$(cat "$TEST_TMP/ab.json")" 'd["status"]')" ok "the probe that held b"

step "a probe queued behind the one a node answers starts after the other end is done, not refused"
# b's helper exits before a has read its own; b must not ask a until a's probe-done came.
sparkc_of a --json probe --peer b --kind tcp --duration 1 >"$TEST_TMP/ab.json" 2>&1 &
ab=$!
wait_until 5 tcp_helper_on_b || fail "the a-b probe did not start"
out=$(sparkc_of b --json probe --peer a --kind tcp --duration 1) || fail "b's probe, queued behind a's: $out"
assert_eq "$(json_get "$out" 'd["ok"]')" True "b's probe, queued behind a's"
wait "$ab" || fail "the a-b probe: $(cat "$TEST_TMP/ab.json")"

step "the history keeps history_size results, also after a restart"
for i in $(seq 12); do
        # From the fourth on, results are judged against the learned baseline: degraded (1) is
        # an answer too on a loaded machine.
        rc=0; sparkc_of a --json probe --peer b --kind rtt --count 10 >/dev/null || rc=$?
        [ "$rc" -le 1 ] || fail "rtt probe $i: exit status $rc"
done
count_results() { json_get "$(sparkc_of a --json history)" 'len(d["results"])'; }
assert_eq "$(count_results)" 10 "results kept"
sparkd_stop a
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
assert_eq "$(count_results)" 10 "results kept after a restart"
# 14 results were made (the two tcp ones first): the oldest four are gone, the oldest kept is rtt.
assert_eq "$(json_get "$(sparkc_of a --json history)" 'd["results"][9]["kind"]')" rtt "oldest result kept"

step "a live progress line on a terminal, none in a pipe"
wait_peer_state a b up 10 || fail "a does not see b up after its restart"
cmd="$SPARKC --socket $(sock_of a) probe --peer b --kind tcp --duration 3"
tty_out=$(script -qec "$cmd" /dev/null) || fail "probe on a terminal: $tty_out"
assert_contains "$tty_out" $'\r\033[Ktcp running' "terminal output"
assert_contains "$tty_out" "Gb/s after" "terminal output"
# The rate, not the seconds gone by: on veth it is never exactly 1.00 Gb/s after 1 s.
ticks=$(tr '\r' '\n' <<<"$tty_out" | sed -n 's/.*tcp running: \([0-9.]*\) Gb\/s after \([0-9]*\) s.*/\1 \2/p')
while read -r rate secs; do
        [ "$rate" != "$secs.00" ] || fail "the live line shows $secs s as the rate: $ticks"
done <<<"$ticks"
pipe_err=$($cmd 2>&1 >/dev/null) || fail "probe in a pipe: $pipe_err"
assert_not_contains "$pipe_err" $'\r' "stderr in a pipe"
pass
