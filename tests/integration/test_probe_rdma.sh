#!/usr/bin/env bash
# The rdma probe on a machine without an RDMA device (no ConnectX, no soft-RoCE): the helper
# fails within a second with "no RDMA device: ... the fabric would fall back to TCP" and
# "unavailable": true; between two daemons in namespaces `sparkc probe --kind rdma` ends
# `unavailable` with that reason and no alert, and `--kind all` still runs the other kinds. With
# stand-ins for the helpers of two RDMA nodes: the options and token each side gets, the port
# speed as the default expectation (ok, then degraded with its alert), history and metrics.
# Real hardware: docs/rdma-probe.md.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
RDMA=${PROBE_RDMA_BIN:-$helpers/sparkd-probe-rdma}
[ -x "$RDMA" ] || skip "sparkd-probe-rdma was not built (no librdmacm or libibverbs found)"
[ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ] && skip "this machine has RDMA devices: docs/rdma-probe.md covers them"

step "the helper alone fails at once, saying why"
for side in "--client 10.0.0.1" "--server --bind 10.0.0.1"; do
        start=$(date +%s%N)
        rc=0; out=$("$RDMA" $side --json) || rc=$?
        ms=$((($(date +%s%N) - start) / 1000000))
        assert_eq "$rc" 1 "exit status without an RDMA device ($side)"
        result=$(grep '"result"' <<<"$out")
        assert_eq "$(json_get "$result" 'd["result"]["unavailable"]')" True "unavailable"
        assert_contains "$(json_get "$result" 'd["result"]["error"]')" "no RDMA device: " "error"
        assert_contains "$(json_get "$result" 'd["result"]["error"]')" "the fabric would fall back to TCP" "error"
        [ "$ms" -lt 1000 ] || fail "the helper took $ms ms to find no RDMA device"
        echo "no RDMA device after $ms ms ($side)"
done
rc=0; "$RDMA" --server 2>"$TEST_TMP/usage.err" || rc=$?
assert_eq "$rc" 2 "a server without --bind"
assert_contains "$(cat "$TEST_TMP/usage.err")" "the server needs --bind ADDR" "its message"
rc=0; "$RDMA" --client 10.0.0.1 --tx-depth 16 --cq-mod 32 2>"$TEST_TMP/usage.err" || rc=$?
assert_eq "$rc" 2 "cq-mod above tx-depth"
assert_contains "$(cat "$TEST_TMP/usage.err")" "--cq-mod 32 is above --tx-depth 16" "its message"
assert_contains "$("$RDMA" --help)" "ib_write_bw -q 4 -R" "--help"

two_probe_nodes

step "probe-kinds describes rdma"
kinds=$(sparkc_of a --json probe-kinds)
assert_eq "$(json_get "$kinds" '{p["name"]: p["default"] for k in d["kinds"] if k["name"] == "rdma" for p in k["params"]}')" \
        "{'duration_s': 5, 'qps': 4, 'size': 65536, 'tx_depth': 128, 'cq_mod': 100, 'lat_iters': 1000, 'lat_size': 2, 'one_way': 0, 'gid_index': 'auto'}" \
        "parameters and defaults"

step "sparkc probe --kind rdma: unavailable, with the reason, at once"
start=$(date +%s%N)
rc=0; out=$(sparkc_of a --json probe --peer b --kind rdma) || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
assert_eq "$rc" 2 "exit status of an unavailable kind asked for by name"
assert_eq "$(json_get "$out" 'd["status"]')" unavailable "status"
assert_contains "$(json_get "$out" 'd["error"]')" "no RDMA device: " "reason"
assert_contains "$(json_get "$out" 'd["error"]')" "the fabric would fall back to TCP" "reason"
echo "probe unavailable after $ms ms"
# The helpers fail in milliseconds; the rest is the peer exchange on a loaded machine.
[ "$ms" -lt 5000 ] || fail "the rdma probe took $ms ms to end unavailable"
assert_eq "$(grep -c 'event=probe-failed.*kind=rdma' "$(log_of a)" || true)" 0 "probe-failed alerts"
assert_contains "$(cat "$(log_of a)")" "rdma probe to b unavailable: " "the notice instead"

step "bad parameters are refused with the reason"
rc=0; err=$(sparkc_of a probe --peer b --kind rdma --param tx_depth=16 --param cq_mod=32 2>&1) || rc=$?
assert_eq "$rc" 2 "cq_mod above tx_depth"
assert_contains "$err" "cq_mod is above its tx_depth" "its message"
rc=0; err=$(sparkc_of a probe --peer b --kind rdma --param qps=17 2>&1) || rc=$?
assert_contains "$err" "the rdma probe's qps is an integer from 1 to 16" "too many queue pairs"

step "--kind all still runs the other kinds"
rc=0; out=$(sparkc_of a --json probe --peer b --kind all --duration 1) || rc=$?
assert_eq "$rc" 0 "exit status of --kind all"
statuses=$(json_get "$out" '{r["kind"]: r["status"] for r in d}')
assert_contains "$statuses" "'rtt': 'ok', 'tcp': 'ok'" "the other kinds measured"
assert_contains "$statuses" "'rdma': 'unavailable'" "rdma"
assert_contains "$(json_get "$out" '[r["error"] for r in d if r["kind"] == "rdma"][0]')" "no RDMA device" "its reason"

step "through the daemons: options, token, the port speed as the expectation, history, metrics"
# Stand-ins for the helpers of two RDMA nodes: the peer's prints the listening line
# sparkd-probe-rdma prints there, ours records how sparkd started it and prints a client result
# of the real helper's shape with the port's payload rate (196.1 Gb/s: 200G at MTU 4096).
mkdir "$TEST_TMP/peer" "$TEST_TMP/here"
cat >"$TEST_TMP/peer/sparkd-probe-rdma" <<EOF2
#!/bin/sh
{ echo "ARGS \$*"; env | grep -E '^SPARKD_PROBE_' | sort; } >"$TEST_TMP/server.env"
echo '{"phase":"listening","port":18515,"rails":"rocep1s0f1 10.99.0.2/18515, roceP2p1s0f1 fe80::1%enP2p1s0f1np1/40000"}'
exec sleep 47.5 # the peer helper stays up until sparkd stops it
EOF2
cat >"$TEST_TMP/here/sparkd-probe-rdma" <<EOF2
#!/bin/sh
{ echo "ARGS \$*"; env | grep -E '^SPARKD_PROBE_' | sort; } >"$TEST_TMP/client.env"
gbps=\$(cat "$TEST_TMP/gbps")
if [ "\$gbps" = timeout ]; then
        echo '{"result":{"kind":"rdma","ok":false,"error":"timeout","phase":"reverse"}}'
        exit 1
fi
rail() { echo "{\"name\":\"\$1\",\"netdev\":\"\$2\",\"gbps\":\$3,\"qps\":4,\"gid_index\":3}"; }
dir() { echo "{\"direction\":\"\$1\",\"from\":\"\$2\",\"to\":\"\$3\",\"gbps\":\$gbps,\"rails\":[\$(rail rocep1s0f1 enp1s0f1np1 95),\$(rail roceP2p1s0f1 enP2p1s0f1np1 95)]}"; }
echo "{\"result\":{\"kind\":\"rdma\",\"ok\":true,\"role\":\"client\",\"gbps\":\$gbps,\"expected_gbps\":196.1,\"typical_us\":1.47,\"directions\":[\$(dir forward 10.99.0.1 10.99.0.2),\$(dir reverse 10.99.0.2 10.99.0.1)]}}"
EOF2
chmod +x "$TEST_TMP/peer/sparkd-probe-rdma" "$TEST_TMP/here/sparkd-probe-rdma"
peer_conf a fa 10.99.0.2 "[probe]" "helper_dir = $TEST_TMP/here" "interval = 0" "rtt_interval = 0" \
        "rdma_twins = rocep1s0f1 roceP2p1s0f1"
peer_conf b fb 10.99.0.1 "[probe]" "helper_dir = $TEST_TMP/peer" "interval = 0" "rtt_interval = 0"
sparkc_of a reload >/dev/null || fail "reload of a"
sparkc_of b reload >/dev/null || fail "reload of b"
echo 190.5 >"$TEST_TMP/gbps"
out=$(sparkc_of a --json probe --peer b --kind rdma --duration 2 --param qps=2 --param gid_index=3) ||
        fail "rdma probe: $out"
assert_eq "$(json_get "$out" 'd["status"]')" ok "status"
assert_eq "$(json_get "$out" '(d["expected"]["value"], d["expected"]["source"])')" "(196.1, 'port speed')" "expectation"
client=$(cat "$TEST_TMP/client.env")
server=$(cat "$TEST_TMP/server.env")
assert_contains "$client" "--client 10.99.0.2 --port 18515 --bind 10.99.0.1" "the client's arguments"
assert_contains "$client" "--duration 2 --qps 2 --size 65536 --tx-depth 128 --cq-mod 100 --lat-iters 1000 --lat-size 2" \
        "the client's options"
assert_not_contains "$client" "--one-way" "both directions by default"
assert_contains "$server" "--server --bind 10.99.0.2 --tx-depth 128 --cq-mod 100" "the server's arguments"
assert_not_contains "$server" "--qps" "the client's options stay on the client"
# The GID index is a parameter for both sides; the twins are each node's own config.
assert_contains "$client" "--gid-index 3" "the client's GID index"
assert_contains "$server" "--gid-index 3" "the server's GID index"
assert_contains "$client" "--twins rocep1s0f1,roceP2p1s0f1" "this node's twins"
assert_not_contains "$server" "--twins" "no twins where the peer's config names none"
token=$(grep SPARKD_PROBE_TOKEN= <<<"$client")
[ ${#token} -eq $((19 + 32)) ] || fail "the client's token: $token"
assert_contains "$server" "$token" "the same one-time token on both sides"
assert_contains "$client" "SPARKD_PROBE_RAILS=rocep1s0f1 10.99.0.2/18515" "the listening line's fields reach the client"
wait_until 10 sh -c "! pgrep -f '[s]leep 47.5' >/dev/null" || fail "the peer's helper outlived the probe"

echo 120.25 >"$TEST_TMP/gbps"
rc=0; out=$(sparkc_of a --json probe --peer b --kind rdma --duration 1) || rc=$?
assert_eq "$rc" 1 "exit status of a degraded probe"
assert_eq "$(json_get "$out" 'd["status"]')" degraded "a port below 0.8 of its payload rate"
assert_contains "$(cat "$(log_of a)")" "rdma probe to b degraded: 120.25 Gb/s where 196.10 (port speed) is expected" "the alert"
assert_eq "$(json_get "$(sparkc_of a --json history --peer b --kind rdma)" '[r["status"] for r in d["results"]]')" \
        "['degraded', 'ok', 'unavailable', 'unavailable']" "history"
metrics=$(sparkc_of a metrics)
assert_contains "$metrics" 'sparkd_probe_rdma_bytes_per_second{peer="b"} 15031250000' "throughput metric"
assert_contains "$metrics" 'sparkd_probe_rdma_write_latency_seconds{peer="b"} 1.4' "latency metric"
if command -v promtool >/dev/null; then
        promtool check metrics <<<"$metrics" || fail "promtool rejects the metrics"
fi

echo timeout >"$TEST_TMP/gbps"
rc=0; out=$(sparkc_of a --json probe --peer b --kind rdma --duration 1) || rc=$?
assert_eq "$rc" 2 "exit status of a helper past its deadline"
assert_eq "$(json_get "$out" 'd["error"]')" "timeout: the helper's deadline passed in its phase reverse" \
        "the helper's own phase in the error"
sparkc_of b status >/dev/null || fail "b stopped serving"
sparkd_stop a
sparkd_stop b
pass
