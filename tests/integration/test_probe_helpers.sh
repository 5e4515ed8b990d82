#!/usr/bin/env bash
# The probe helpers across a cable: sparkd-probe-tcp and sparkd-probe-rtt, server in one
# namespace and client in the other, as the daemon runs them (token in the environment, --json).
# Results are sane, a wrong or missing token is refused without using up the server, a deadline
# shorter than the run ends it quickly with a timeout result, bad options exit 2, and no helper
# outlives its test.
# The helpers need no daemon; lib.sh asks for the daemon's binaries all the same.
export SPARKD_BIN=${SPARKD_BIN:-unused} SPARKC_BIN=${SPARKC_BIN:-unused}
. "$(dirname "$0")/lib.sh"

TCP=${PROBE_TCP_BIN:?PROBE_TCP_BIN must name sparkd-probe-tcp}
RTT=${PROBE_RTT_BIN:?PROBE_RTT_BIN must name sparkd-probe-rtt}
unset SPARKD_PROBE_TOKEN
TOKEN=5f0c2d7e9a1b4c3d8e7f6a5b4c3d2e1f

a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" pa "$b" pb 10.99.0.1/24 10.99.0.2/24
ip -n "$a" link set pa mtu 9000
ip -n "$b" link set pb mtu 9000

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# server_start NAME BIN TOKEN [ARGS...]: the server side in b, listening on 10.99.0.2; waits for
# its listening line and sets PORT and SERVER_PID. TOKEN may be empty (no token).
server_start() {
        local name=$1 bin=$2 token=$3 out="$TEST_TMP/$1.out"
        shift 3
        if [ -n "$token" ]; then
                SPARKD_PROBE_TOKEN=$token ip netns exec "$b" "$bin" --json --server --bind 10.99.0.2 "$@" \
                        >"$out" 2>"$TEST_TMP/$name.log" &
        else
                ip netns exec "$b" "$bin" --json --server --bind 10.99.0.2 "$@" >"$out" 2>"$TEST_TMP/$name.log" &
        fi
        SERVER_PID=$!
        DAEMON_PIDS+=("$SERVER_PID")
        wait_until 5 grep -q '"phase":"listening"' "$out" || fail "$name: no listening line within 5 s"
        PORT=$(json_get "$(head -n1 "$out")" 'd["port"]')
        [ "$PORT" -gt 0 ] || fail "$name: listening on port $PORT"
        assert_eq "$(json_get "$(head -n1 "$out")" 'd["address"]')" 10.99.0.2 "$name's listening address"
}

# client_run NAME BIN TOKEN [ARGS...]: the client side in a, against the server's PORT; sets
# CLIENT_RC and RESULT (the final line's result object, as JSON).
client_run() {
        local name=$1 bin=$2 token=$3 out="$TEST_TMP/$1.out"
        shift 3
        CLIENT_RC=0
        if [ -n "$token" ]; then
                SPARKD_PROBE_TOKEN=$token ip netns exec "$a" "$bin" --json --client 10.99.0.2 --port "$PORT" \
                        --bind 10.99.0.1 "$@" >"$out" 2>"$TEST_TMP/$name.log" || CLIENT_RC=$?
        else
                ip netns exec "$a" "$bin" --json --client 10.99.0.2 --port "$PORT" --bind 10.99.0.1 "$@" \
                        >"$out" 2>"$TEST_TMP/$name.log" || CLIENT_RC=$?
        fi
        RESULT=$(final_result "$out")
}

# final_result FILE: the result object of the last line, which must be the only result line.
final_result() {
        python3 - "$1" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert lines, "no output"
assert sum("result" in l for l in lines) == 1, "not exactly one result line"
assert "result" in lines[-1], "the result is not the last line"
print(json.dumps(lines[-1]["result"]))
PY
}

# server_wait NAME [TIMEOUT_SEC]: waits for the server to exit; sets SERVER_RC and SERVER_RESULT.
server_wait() {
        local name=$1 timeout=${2:-10}
        wait_until "$timeout" sh -c "! kill -0 $SERVER_PID" || fail "$name still running after ${timeout} s"
        SERVER_RC=0
        wait "$SERVER_PID" || SERVER_RC=$?
        SERVER_RESULT=$(final_result "$TEST_TMP/$name.out")
}

check() { # check JSON PYTHON_EXPR WHAT
        [ "$(json_get "$1" "$2")" = True ] || fail "$3: $2 is not true in $1"
}

no_helpers_left() {
        local ns
        for ns in "$a" "$b"; do
                [ -z "$(ip netns pids "$ns")" ] || fail "processes left in $ns: $(ip netns pids "$ns" | xargs)"
        done
}

step "tcp: 2 streams for 2 s with a token"
server_start tcp-server "$TCP" "$TOKEN"
client_run tcp-client "$TCP" "$TOKEN" --streams 2 --duration 2
assert_eq "$CLIENT_RC" 0 "tcp client's exit status ($RESULT)"
check "$RESULT" 'd["kind"] == "tcp" and d["ok"] is True and d["streams"] == 2' "tcp result"
check "$RESULT" '0 < d["gbps"] < 10000 and d["bytes"] > 10**6 and 1.5 < d["duration_s"] < 5' "tcp numbers"
# Both directions, each consistent with its bytes and time, on the netdev holding the address;
# the result's gbps is the weaker one.
check "$RESULT" '[x["direction"] for x in d["directions"]] == ["forward", "reverse"]' "tcp directions"
check "$RESULT" 'all(abs(x["gbps"] - x["bytes"] * 8 / 1e9 / x["duration_s"]) < 0.01 * x["gbps"] + 0.002 and x["bytes"] > 10**6 for x in d["directions"])' "tcp Gb/s"
check "$RESULT" 'd["gbps"] == min(x["gbps"] for x in d["directions"]) and d["directions"][0]["bytes"] == d["bytes"]' "tcp weaker direction"
check "$RESULT" 'd["directions"][1]["from"] == "10.99.0.2" and all(x["rails"] == [{"name": "pa", "netdev": "pa", "gbps": x["gbps"]}] for x in d["directions"])' "tcp rails"
check "$RESULT" 'len(d["per_stream"]) == 2 and all(s["bytes"] > 0 and s["gbps"] > 0 for s in d["per_stream"])' \
        "tcp per stream"
check "$RESULT" 'sum(s["bytes"] for s in d["per_stream"]) == d["bytes"] == d["bytes_sent"]' "tcp byte counts"
check "$RESULT" 'd["retransmits"] is None or d["retransmits"] >= 0' "tcp retransmits"
check "$RESULT" 'd["local"] == "10.99.0.1" and d["remote"] == "10.99.0.2"' "tcp addresses"
python3 - "$TEST_TMP/tcp-client.out" <<'PY' || fail "tcp client: no progress lines"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert any(l.get("phase") == "running" and l["elapsed_s"] >= 1 and l["gbps"] > 0 for l in lines)
PY
server_wait tcp-server
assert_eq "$SERVER_RC" 0 "tcp server's exit status ($SERVER_RESULT)"
check "$SERVER_RESULT" 'd["ok"] is True and d["role"] == "server" and d["remote"] == "10.99.0.1"' "tcp server"
check "$SERVER_RESULT" "d['bytes'] == $(json_get "$RESULT" 'd["bytes"]')" "tcp server's bytes"
check "$SERVER_RESULT" "d['reverse_bytes_sent'] == $(json_get "$RESULT" 'd["directions"][1]["bytes"]')" "tcp reverse bytes"

step "rtt: 500 round trips of 64 bytes with a token"
server_start rtt-server "$RTT" "$TOKEN"
client_run rtt-client "$RTT" "$TOKEN" --count 500 --size 64
assert_eq "$CLIENT_RC" 0 "rtt client's exit status ($RESULT)"
check "$RESULT" 'd["kind"] == "rtt" and d["ok"] is True and d["count"] == 500 and d["size"] == 64' "rtt result"
check "$RESULT" '0 < d["min_us"] <= d["median_us"] <= d["p99_us"] <= d["max_us"] < 10**6' "rtt order"
check "$RESULT" 'd["min_us"] <= d["mean_us"] <= d["max_us"]' "rtt mean"
check "$RESULT" 'd["local"] == "10.99.0.1" and d["remote"] == "10.99.0.2"' "rtt addresses"
server_wait rtt-server
assert_eq "$SERVER_RC" 0 "rtt server's exit status"
check "$SERVER_RESULT" 'd["ok"] is True and d["count"] == 500 and d["bytes"] == 500 * 64' "rtt server"

step "rtt: larger messages at an interval, no token on either side (by hand)"
server_start rtt-plain "$RTT" ""
client_run rtt-plain-client "$RTT" "" --count 20 --size 9000 --interval-us 2000
assert_eq "$CLIENT_RC" 0 "rtt client without token ($RESULT)"
check "$RESULT" 'd["ok"] is True and d["count"] == 20 and d["size"] == 9000' "rtt without token"
server_wait rtt-plain
assert_eq "$SERVER_RC" 0 "rtt server without token"

step "a wrong or missing token is refused and does not use up the server"
server_start tcp-guarded "$TCP" "$TOKEN"
client_run tcp-wrong "$TCP" "not-the-token" --duration 1
assert_eq "$CLIENT_RC" 1 "client with a wrong token"
check "$RESULT" 'd["ok"] is False and d["phase"] == "connecting" and "wrong token" in d["error"]' "wrong token"
client_run tcp-missing "$TCP" "" --duration 1
assert_eq "$CLIENT_RC" 1 "client without a token"
check "$RESULT" 'd["ok"] is False and "requires a token" in d["error"]' "missing token"
kill -0 "$SERVER_PID" 2>/dev/null || fail "the server gave up after refusing"
client_run tcp-right "$TCP" "$TOKEN" --duration 1 --one-way
assert_eq "$CLIENT_RC" 0 "client with the right token after the refusals ($RESULT)"
check "$RESULT" '[x["direction"] for x in d["directions"]] == ["forward"] and d["gbps"] == d["directions"][0]["gbps"]' "--one-way"
server_wait tcp-guarded
assert_eq "$SERVER_RC" 0 "guarded server"
check "$SERVER_RESULT" '"reverse_bytes_sent" not in d' "one-way server"

server_start rtt-guarded "$RTT" "$TOKEN"
client_run rtt-wrong "$RTT" "not-the-token" --count 10
assert_eq "$CLIENT_RC" 1 "rtt client with a wrong token"
check "$RESULT" 'd["ok"] is False and "wrong token" in d["error"]' "rtt wrong token"
step "a connection that never authenticates is dropped after 2 s; the right client still gets served"
ip netns exec "$a" python3 - "$PORT" <<'PY' || fail "silent connection was not closed by the server"
import socket, sys, time
s = socket.create_connection(("10.99.0.2", int(sys.argv[1])), timeout=5)
t = time.monotonic()
assert s.recv(100) == b""  # closed by the server, no answer
assert 1.5 < time.monotonic() - t < 4, time.monotonic() - t
PY
client_run rtt-right "$RTT" "$TOKEN" --count 10
assert_eq "$CLIENT_RC" 0 "rtt client with the right token ($RESULT)"
server_wait rtt-guarded

step "a deadline shorter than the run ends it with a timeout result"
server_start tcp-long "$TCP" "$TOKEN"
t0=$(now_ms)
client_run tcp-timeout "$TCP" "$TOKEN" --duration 10 --deadline 1.5
elapsed=$(($(now_ms) - t0))
assert_eq "$CLIENT_RC" 1 "client past its deadline"
check "$RESULT" 'd["ok"] is False and d["error"] == "timeout" and d["phase"] == "running"' "tcp timeout"
# Anything well short of the 10 s run shows the deadline cut it; the slack is for starting and
# ending a process in a namespace on a busy machine.
[ "$elapsed" -lt 6000 ] || fail "the timeout took $elapsed ms for a 1.5 s deadline (the run is 10 s)"
server_wait tcp-long 10 # the client's sockets closed with it: the server ends too, either way

server_start rtt-long "$RTT" "$TOKEN"
t0=$(now_ms)
client_run rtt-timeout "$RTT" "$TOKEN" --count 100000 --interval-us 1000 --deadline 1
elapsed=$(($(now_ms) - t0))
assert_eq "$CLIENT_RC" 1 "rtt client past its deadline"
check "$RESULT" 'd["ok"] is False and d["error"] == "timeout" and d["phase"] == "running"' "rtt timeout"
[ "$elapsed" -lt 6000 ] || fail "the timeout took $elapsed ms for a 1 s deadline (the run is 100 s)"
server_wait rtt-long 10

step "a server nobody connects to times out while listening"
t0=$(now_ms)
server_start tcp-lonely "$TCP" "$TOKEN" --deadline 1
server_wait tcp-lonely 5
elapsed=$(($(now_ms) - t0))
assert_eq "$SERVER_RC" 1 "server past its deadline"
check "$SERVER_RESULT" 'd["ok"] is False and d["error"] == "timeout" and d["phase"] == "listening"' "listen timeout"
[ "$elapsed" -lt 4500 ] || fail "the listening timeout took $elapsed ms for a 1 s deadline"

step "nothing listening: a clear error, not a hang"
PORT=1
client_run tcp-refused "$TCP" "$TOKEN" --deadline 5
assert_eq "$CLIENT_RC" 1 "client without a server"
check "$RESULT" 'd["ok"] is False and "refused" in d["error"] and d["phase"] == "connecting"' "refused"

step "bad command lines exit 2 with a message"
for args in "--client 10.99.0.2 --port 5 --streams 65" "--client 10.99.0.2" "--server --streams 2" "--bogus" \
        "--client 10.99.0.2 --port 5 --duration -1" "--server --client 10.99.0.2" "--server --port 70000"; do
        rc=0
        # shellcheck disable=SC2086
        msg=$("$TCP" $args 2>&1 >/dev/null) || rc=$?
        assert_eq "$rc" 2 "sparkd-probe-tcp $args"
        assert_contains "$msg" "sparkd-probe-tcp: " "message for $args"
done
rc=0
msg=$("$RTT" --client 10.99.0.2 --port 5 --count 0 2>&1 >/dev/null) || rc=$?
assert_eq "$rc" 2 "sparkd-probe-rtt --count 0"
assert_contains "$msg" "--count wants a whole number from 1 to 1000000, not '0'"
rc=0
SPARKD_PROBE_TOKEN='' "$RTT" --server >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 2 "an empty token"
for bin in "$TCP" "$RTT"; do
        help=$("$bin" --help) || fail "$bin --help"
        assert_contains "$help" "SPARKD_PROBE_TOKEN" "$bin --help"
        assert_contains "$help" "--deadline" "$bin --help"
done

step "no helper is left behind, none reported a sanitizer finding"
no_helpers_left
! grep -l -E "Sanitizer|runtime error:" "$TEST_TMP"/*.log || fail "sanitizer findings in the logs above"
pass
