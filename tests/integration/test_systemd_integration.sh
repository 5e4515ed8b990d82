#!/usr/bin/env bash
# What systemd sees: READY/RELOADING/STOPPING notifications, watchdog pings from the loop, and a
# listening socket passed by socket activation.
. "$(dirname "$0")/lib.sh"

ns=$(netns_new a)

step "sd_notify: READY, watchdog pings, RELOADING then READY, STOPPING"
notify_sock=$TEST_TMP/notify.sock
notes=$TEST_TMP/notify.txt
python3 "$TESTS_DIR/notify_listener.py" "$notify_sock" "$notes" &
listener=$!
DAEMON_PIDS+=("$listener")
wait_until 5 grep -q LISTENING "$notes" || fail "notify listener did not start"
NOTIFY_SOCKET=$notify_sock WATCHDOG_USEC=400000 sparkd_start a "$ns"
wait_until 5 grep -q "^READY=1 STATUS=serving on $(sock_of a)" "$notes" || fail "no READY=1: $(cat "$notes")"
wait_until 5 sh -c "[ \$(grep -c '^WATCHDOG=1' '$notes') -ge 4 ]" || fail "watchdog pings missing: $(cat "$notes")"
kill -HUP "$(pid_of a)"
wait_until 5 grep -q "^RELOADING=1 MONOTONIC_USEC=" "$notes" || fail "no RELOADING=1"
wait_until 5 sh -c "[ \$(grep -c '^READY=1' '$notes') -ge 2 ]" || fail "no READY=1 after the reload"
sparkd_stop a
grep -q "^STOPPING=1" "$notes" || fail "no STOPPING=1: $(cat "$notes")"

step "socket activation"
command -v systemd-socket-activate >/dev/null || skip "needs systemd-socket-activate"
sock=$(sock_of b)
ip netns exec "$ns" systemd-socket-activate -l "$sock" "$SPARKD" -f --log-target=stderr \
        --state-dir "$TEST_TMP/b.state" >>"$(log_of b)" 2>&1 &
pid=$!
DAEMON_PIDS+=("$pid")
DAEMON_PID_OF[b]=$pid
wait_until 5 test -S "$sock" || fail "activation socket not created"
json=$(sparkc_of b --json status)
assert_eq "$(json_get "$json" 'd["socket_activated"]')" True "socket_activated"
assert_eq "$(json_get "$json" 'd["socket"]')" "$sock" "socket path"
grep -q "(socket from systemd)" "$(log_of b)" || fail "activation not logged"
sparkd_stop b
pass
