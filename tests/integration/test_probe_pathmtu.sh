#!/usr/bin/env bash
# The pathmtu probe across a router: two daemons whose fabric ports have MTU 9000, and a router
# namespace between them (forwarding on) whose links have MTU 1500. The probe ends `failed` with
# a path-mtu error naming 1472 bytes as the largest payload that got through, an alert, a history
# entry and the size in the metrics; with the router's links at 9000 the same path passes with
# 8972. The helper alone refuses bad command lines, answers only datagrams with its token and
# takes an MTU to check (--mtu) below the interface's; the rtt schedule runs the kind by itself.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
PATHMTU=${PROBE_PATHMTU_BIN:-$helpers/sparkd-probe-pathmtu}

step "the helper refuses bad command lines"
rc=0; err=$("$PATHMTU" --client 10.0.0.1 2>&1) || rc=$?
assert_eq "$rc" 2 "a client without the server's port"
assert_contains "$err" "needs the server's --port" "its message"
rc=0; err=$("$PATHMTU" --server --mtu 9000 2>&1) || rc=$?
assert_eq "$rc" 2 "a client option on the server"
rc=0; err=$("$PATHMTU" --client 10.0.0.1 --port 1 --mtu 50 2>&1) || rc=$?
assert_eq "$rc" 2 "an MTU below 96"
assert_contains "$err" "--mtu" "its message"
"$PATHMTU" --help | grep -q "don't-fragment" || fail "--help does not say what it does"

"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
a=$(netns_new a)
r=$(netns_new r)
b=$(netns_new b)
veth_pair "$a" fa "$r" ra 10.99.1.1/24 10.99.1.254/24
veth_pair "$r" rb "$b" fb 10.99.2.254/24 10.99.2.1/24
ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1
ip -n "$r" link set ra mtu 1500
ip -n "$r" link set rb mtu 1500
# The peer channel is TCP: its segments must fit the router too, as MSS clamping on a real
# router would make them. The probe's UDP is not affected.
ip -n "$a" route add 10.99.2.0/24 via 10.99.1.254 advmss 1400
ip -n "$b" route add 10.99.1.0/24 via 10.99.2.254 advmss 1400

step "by hand: datagrams without the server's token get no answer; with it, --mtu 1500 passes"
ip -n "$a" link set fa mtu 9000
ip -n "$b" link set fb mtu 9000
# pathmtu_pair SERVER_TOKEN CLIENT_TOKEN CLIENT_OPTIONS...: a server in b, the client in a; the
# client's output in client.out, the server's pid in $server.
pathmtu_pair() {
        local server_token=$1 client_token=$2 port
        shift 2
        # Emptied here, not by the background job's redirection: that may come after the wait
        # below has read the previous server's listening line.
        : >"$TEST_TMP/server.out"
        SPARKD_PROBE_TOKEN=$server_token ip netns exec "$b" "$PATHMTU" --server --bind 10.99.2.1 --json \
                --deadline 10 >"$TEST_TMP/server.out" &
        server=$!
        wait_until 5 grep -q listening "$TEST_TMP/server.out" || fail "the server does not listen"
        port=$(json_get "$(head -1 "$TEST_TMP/server.out")" 'd["port"]')
        SPARKD_PROBE_TOKEN=$client_token ip netns exec "$a" "$PATHMTU" --client 10.99.2.1 --port "$port" \
                --bind 10.99.1.1 --json "$@" >"$TEST_TMP/client.out" || true
}
pathmtu_pair right-token wrong-token --tries 1 --timeout-ms 20
assert_contains "$(json_get "$(tail -1 "$TEST_TMP/client.out")" 'd["result"]["error"]')" \
        "path-mtu: not even 68 bytes of UDP payload got through" "a wrong token"
kill "$server"
wait "$server" || true
pathmtu_pair right-token right-token --mtu 1500
assert_eq "$(json_get "$(tail -1 "$TEST_TMP/client.out")" '[d["result"][k] for k in ("ok", "largest_payload", "tries")]')" \
        "[True, 1472, 1]" "--mtu 1500 with the token"
wait "$server" || fail "the server did not end with the client's goodbye"
assert_eq "$(json_get "$(tail -1 "$TEST_TMP/server.out")" '[d["result"][k] for k in ("received", "largest_received")]')" "[1, 1472]" "the server's account"

peer_conf a fa 10.99.2.1 "[probe]" "helper_dir = $helpers"
peer_conf b fb 10.99.1.1 "[probe]" "helper_dir = $helpers"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
wait_peer_state a b up 10 || fail "peers not up across the router"
assert_eq "$(mtu_of "$a" fa) $(mtu_of "$b" fb)" "9000 9000" "both ends' MTU"

step "a 1500-byte hop between two 9000-byte ends: a path-mtu failure at 1472 bytes"
start=$(date +%s%N)
rc=0; out=$(sparkc_of a --json probe --peer b --kind pathmtu) || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
echo "took $ms ms"
assert_eq "$rc" 2 "exit status of a failed probe"
assert_eq "$(json_get "$out" 'd["status"]')" failed "status"
err=$(json_get "$out" 'd["error"]')
assert_contains "$err" "path-mtu: the largest UDP payload that got through to 10.99.2.1 with don't-fragment is 1472 bytes (path MTU 1500), not the 8972 that MTU 9000 on fa needs" "the error"
assert_eq "$(json_get "$out" '[d["detail"][k] for k in ("largest_payload", "full_payload", "path_mtu", "smallest_failed", "over_mtu_refused")]')" \
        "[1472, 8972, 1500, 1473, True]" "the helper's numbers"
table=$(sparkc_of a probe --peer b --kind pathmtu 2>&1) || true
assert_contains "$table" "1472 bytes" "the table"
grep -q '^20.* pathmtu *failed *path MTU 1500 *the MTU of fa, 9000$' <<<"$table" || fail "the failed row: $table"
wait_until 5 grep -q 'event=probe-failed.*kind=pathmtu.*path-mtu: ' "$(log_of a)" || fail "no probe-failed alert"
assert_contains "$(sparkc_of a metrics)" 'sparkd_probe_pathmtu_largest_payload_bytes{peer="b"} 1472' "metrics"
assert_eq "$(json_get "$(sparkc_of a --json history --peer b --kind pathmtu)" '[r["status"] for r in d["results"]]')" \
        "['failed', 'failed']" "history"
assert_contains "$(sparkc_of a history --peer b --kind pathmtu)" "path-mtu: " "sparkc history"

step "the same path with the router's links at 9000 passes with 8972 bytes, both ways"
ip -n "$r" link set ra mtu 9000
ip -n "$r" link set rb mtu 9000
out=$(sparkc_of a --json probe --peer b --kind pathmtu) || fail "pathmtu probe failed: $out"
assert_eq "$(json_get "$out" 'd["status"]')" ok "status"
assert_eq "$(json_get "$out" '[d["measured"][k] for k in ("largest_payload", "path_mtu", "tries", "over_mtu_refused")]')" \
        "[8972, 9000, 1, True]" "the numbers"
table=$(sparkc_of a probe --peer b --kind pathmtu) || fail "pathmtu probe failed: $table"
assert_contains "$table" "8972 of 8972 bytes" "the table"
out=$(sparkc_of b --json probe --peer a --kind pathmtu) || fail "pathmtu probe from b failed: $out"
assert_eq "$(json_get "$out" 'd["measured"]["largest_payload"]')" 8972 "from b"
assert_contains "$(sparkc_of a metrics)" 'sparkd_probe_pathmtu_largest_payload_bytes{peer="b"} 8972' "metrics"
rc=0; out=$(sparkc_of a --json probe --peer b --kind all --duration 1) || rc=$?
assert_eq "$(json_get "$out" '{r["kind"]: r["status"] for r in d}["pathmtu"]')" ok "--kind all runs it"

step "the rtt schedule runs it to every peer"
peer_conf a fa 10.99.2.1 "[probe]" "helper_dir = $helpers" "rtt_interval = 2s"
sparkc_of a reload >/dev/null || fail "reload of a"
wait_until 20 sh -c "'$SPARKC' --socket '$(sock_of a)' --json history --peer b --kind pathmtu | grep -q '\"scheduled\": *true'" ||
        fail "no scheduled pathmtu result"
sparkc_of a status >/dev/null || fail "a stopped serving"
sparkc_of b status >/dev/null || fail "b stopped serving"
sparkd_stop a
sparkd_stop b
pass
