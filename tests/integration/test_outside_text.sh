#!/usr/bin/env bash
# Outside text reaching a node's terminal and log: a peer holding the cluster key says hello
# under a name with an escape sequence and a newline ("\e[31mrogue\ntouch PWNED #"); the name is
# refused where it enters, `sparkc peers` and `cluster` show no raw escape, and every line of the
# daemon's log is a log line (none begun by the name's second line). Then `sparkc env --check`
# with a Latin-1 byte in a judged variable and in two lines of the NCCL config file (one a
# comment) names the variable and each line, and judges the rest.
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || skip "needs openssl (the hostile peer's TLS)"

v=$(netns_new v)
spark_fixture_start v "$v" "$TEST_TMP/host-v"

step "a keyed peer says hello under a name with an escape sequence and a newline"
name=$'\e[31mrogue\ntouch PWNED #'
ip netns exec "$v" python3 "$TESTS_DIR/peer_hostile_hello.py" 192.168.177.11 7471 "$TEST_TMP/v.key" "$name" 20 \
        >"$TEST_TMP/hello.out" 2>&1 &
DAEMON_PIDS+=("$!")
# Refused, the connection closes at once; taken, the peer is listed while it stays.
rogue_seen() { grep -q closed "$TEST_TMP/hello.out" || sparkc_of v --json peers | grep -q eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee; }
wait_until 15 rogue_seen || fail "the peer's hello was neither refused nor taken: $(cat "$TEST_TMP/hello.out")"
sparkd_caught_up v
for cmd in peers cluster; do
        out=$(sparkc_of v "$cmd" 2>&1 || true)
        if grep -q $'\e' <<<"$out"; then fail "v's $cmd printed a raw escape: $(cat -v <<<"$out")"; fi
done
bad=$(grep -Ev '^(debug|info|notice|warning|err|crit|alert|emerg): ' "$(log_of v)" || true)
[ -z "$bad" ] || fail "v's log has lines that are not log lines: $(cat -v <<<"$bad")"
if grep -q $'\e' "$(log_of v)"; then fail "v's log holds a raw escape"; fi
assert_contains "$(cat "$TEST_TMP/hello.out")" closed "the connection of the hello under that name"

step "a keyed peer's hello signed for another session, and one without a node key: refused, said"
# Refusals of connections are logged once per 10 s (the one above among them): each poll tries again.
# refused_with MODE TEXT: a hello of MODE closes at once and the log says TEXT.
refused_with() {
        ip netns exec "$v" python3 "$TESTS_DIR/peer_hostile_hello.py" 192.168.177.11 7471 "$TEST_TMP/v.key" \
                honest-name 3 "$1" >"$TEST_TMP/hello.$1.out" 2>&1
        grep -q closed "$TEST_TMP/hello.$1.out" && grep -q "$2" "$(log_of v)"
}
wait_until 30 refused_with replay "does not verify for this TLS session" ||
        fail "a replayed hello was not refused with a log line: $(grep -i hello "$(log_of v)" | tail -3)"
grep "does not verify for this TLS session" "$(log_of v)" | head -1 | sed 's/^/    /'
wait_until 30 refused_with proto1 "speaks peer protocol 1, without a node key" ||
        fail "a hello without a key was not refused with a log line: $(grep -i hello "$(log_of v)" | tail -3)"
grep "speaks peer protocol 1" "$(log_of v)" | head -1 | sed 's/^/    /'

step "env --check with a Latin-1 byte in a variable and in the NCCL config file"
printf 'NCCL_DEBUG=INFO\n# caf\xe9\nNCCL_IB_HCA=ml\xe9x5_0\nNCCL_SOCKET_IFNAME=enp1s0f1np1\n' >"$TEST_TMP/nccl.conf"
rc=0
out=$(NCCL_CONF_FILE="$TEST_TMP/nccl.conf" NCCL_NET_GDR_LEVEL=$'SY\xe9' ip netns exec "$v" \
        "$SPARKC" --socket "$(sock_of v)" env --check 2>&1) || rc=$?
echo "$out" | cat -v | sed 's/^/    /'
assert_eq "$rc" 2 "env --check exit status (errors found)"
assert_contains "$out" "NCCL_NET_GDR_LEVEL='SY\\xe9' (environment): byte 3 of the value is not UTF-8" "the variable"
assert_contains "$out" "$TEST_TMP/nccl.conf line 3: byte 15 is not UTF-8" "the file's setting line"
assert_contains "$out" "warning: $TEST_TMP/nccl.conf line 2: byte 6 is not UTF-8" "the file's comment line"
assert_contains "$out" "variables judged" "the rest judged"
pass
