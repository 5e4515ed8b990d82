#!/usr/bin/env bash
# Two daemons under valgrind memcheck for a whole start/serve/stop cycle: status, peers over TLS,
# every other read-only command (the cluster view and a peer's doctor too), a watcher, tcp probes
# each way, an rtt probe and a refused one, malformed and concurrent API clients, junk on the peer
# port, reload, a refused reload, SIGHUP, then SIGTERM. Any memory error or definitely/indirectly
# lost block fails (valgrind's exit status, and its summary is checked too). Skipped without
# valgrind, and for a sanitizer build (the two cannot run together).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

command -v valgrind >/dev/null || skip "needs valgrind"
ldd "$SPARKD" 2>/dev/null | grep -E 'lib(asan|ubsan)' >/dev/null && skip "sparkd is a sanitizer build"
: "${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}"

# Every daemon lib.sh starts runs under memcheck (exec keeps the PID lib.sh waits on); the probe
# helpers it spawns run natively.
cat >"$TEST_TMP/sparkd-valgrind" <<WRAP
#!/bin/sh
exec valgrind --quiet --leak-check=full --errors-for-leak-kinds=definite,indirect \\
        --show-leak-kinds=definite,indirect --error-exitcode=99 --child-silent-after-fork=yes \\
        --log-file="$TEST_TMP/valgrind-%p.log" "$SPARKD" "\$@"
WRAP
chmod +x "$TEST_TMP/sparkd-valgrind"
SPARKD=$TEST_TMP/sparkd-valgrind
SPARKD_START_TIMEOUT=60

"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
for n in a b; do
        other=$([ $n = a ] && echo 10.99.0.2 || echo 10.99.0.1)
        # A slow heartbeat: a daemon under valgrind runs many times slower than it would.
        peer_conf $n f$n $other "[peers]" "heartbeat_interval = 1s" "timeout = 10s" \
                "[probe]" "helper_dir = $PROBE_HELPER_DIR" "interval = 0" "rtt_interval = 0"
done

step "start both under valgrind"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
sparkc_of a status >/dev/null || fail "status of a"

step "peers"
wait_peer_state a b up 60 || fail "a does not see b up: $(sparkc_of a peers)"
wait_peer_state b a up 60 || fail "b does not see a up: $(sparkc_of b peers)"
sparkc_of a peers >/dev/null || fail "peers of a"

step "the other read-only commands, with a watcher attached"
watch_events a
for cmd in version links fabric probe-kinds metrics cluster; do
        sparkc_of a "$cmd" >/dev/null || fail "sparkc $cmd failed"
done
# Without an RDMA device env refuses (1) and doctor finds faults (up to 3): both are answers.
rc=0; sparkc_of a env >/dev/null 2>&1 || rc=$?
[ "$rc" -le 1 ] || fail "env could not ask the daemon (exit status $rc)"
rc=0; sparkc_of a doctor >/dev/null || rc=$?
[ "$rc" -le 3 ] || fail "doctor could not ask the daemon (exit status $rc)"
# b's full doctor through the peer channel, once b's summary has reached a.
knows_b() { [ "$(json_get "$(sparkc_of a --json cluster)" '"b" in [n["name"] for n in d["nodes"]]')" = True ]; }
wait_until 60 knows_b || fail "a's cluster view does not hold b: $(sparkc_of a cluster)"
rc=0; out=$(sparkc_of a doctor --node b) || rc=$?
[ "$rc" -le 3 ] || fail "doctor --node b could not ask the daemon (exit status $rc)"
assert_contains "$out" "its own doctor, asked over the peer channel" "doctor --node b"

step "a tcp probe each way, an rtt probe, a refused probe"
out=$(sparkc_of a --json probe --peer b --kind tcp --duration 1 --streams 2) || fail "tcp probe a->b: $out"
assert_eq "$(json_get "$out" 'd["status"]')" ok "a->b status"
out=$(sparkc_of b --json probe --peer a --kind tcp --duration 1) || fail "tcp probe b->a: $out"
assert_eq "$(json_get "$out" 'd["status"]')" ok "b->a status"
sparkc_of a --json history --peer b --kind tcp >/dev/null || fail "history"
out=$(sparkc_of a --json probe --peer b --kind rtt --count 20) || fail "rtt probe a->b: $out"
rc=0; sparkc_of a probe --peer nobody --kind tcp >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "a probe of an unknown peer succeeded"

step "bad API clients and junk on the peer port"
for scenario in malformed oversize disconnects concurrent subscribe; do
        python3 "$TESTS_DIR/api_client.py" "$(sock_of a)" "$scenario" || fail "api scenario $scenario"
done
ip netns exec "$b" python3 "$TESTS_DIR/peer_junk.py" 10.99.0.1 7471 50 >/dev/null || fail "junk client failed"
wait_peer_state a b up 30 || fail "b no longer up on a after the junk"

step "reload, with a changed config"
peer_conf a fa 10.99.0.2 "[peers]" "heartbeat_interval = 1s" "timeout = 10s" \
        "[probe]" "helper_dir = $PROBE_HELPER_DIR" "interval = 0" "rtt_interval = 0" \
        "[fabric]" "flap_threshold = 5"
sparkc_of a reload >/dev/null || fail "reload of a"
sparkc_of b reload >/dev/null || fail "reload of b"
sparkc_of a --json doctor >/dev/null || true
sparkc_of a status >/dev/null || fail "status after reload"
cp "$TEST_TMP/b.conf" "$TEST_TMP/b.conf.good"
printf '[daemon]\nmode = sometimes\n' >>"$TEST_TMP/b.conf"
rc=0; sparkc_of b reload >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 1 "reload of a broken config"
cp "$TEST_TMP/b.conf.good" "$TEST_TMP/b.conf"
kill -HUP "$(pid_of b)"
wait_until 30 grep -q "config-reloaded" "$(log_of b)" || fail "no config-reloaded on b after SIGHUP"

step "SIGTERM: valgrind's verdict"
sparkd_stop b
sparkd_stop a
n=0
for log in "$TEST_TMP"/valgrind-*.log; do
        n=$((n + 1))
        # --quiet leaves only errors and leaks in the log; the exit status said 0 already.
        if grep -qE "definitely lost|indirectly lost|Invalid|uninitialised|ERROR SUMMARY: [1-9]" "$log"; then
                cat "$log"
                fail "valgrind reports in $log"
        fi
done
[ "$n" -ge 2 ] || fail "$n valgrind logs, expected one per daemon"
pass
