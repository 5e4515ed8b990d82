#!/usr/bin/env bash
# The nccl probe between two daemons in two namespaces, on a machine without a GPU: the helper
# fails at once with "no CUDA device" and the probe ends `unavailable` (not counted as a failure
# by --kind all), both daemons serving. With a stand-in for the peer's GPU side (it prints a
# unique id as a GPU node would), the client helper runs here: the id reaches it through
# probe-ready in its environment, with the NCCL environment of its node (socket interface pinned
# to the probe's cable) and the request's overrides, on both sides. Bad parameters are refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
NCCL=${PROBE_NCCL_BIN:-$helpers/sparkd-probe-nccl}
[ -x "$NCCL" ] || skip "sparkd-probe-nccl was not built (no CUDA runtime or NCCL found)"
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && skip "this machine has a GPU: tests/gpu/ covers it"

step "the helper alone fails at once, saying why"
start=$(date +%s%N)
rc=0; out=$("$NCCL" --server --json) || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
assert_eq "$rc" 1 "exit status without a GPU"
result=$(grep '"result"' <<<"$out")
assert_eq "$(json_get "$result" 'd["result"]["unavailable"]')" True "unavailable"
assert_contains "$(json_get "$result" 'd["result"]["error"]')" "no CUDA device: " "error"
[ "$ms" -lt 3000 ] || fail "the helper took $ms ms to find no CUDA device"
echo "no CUDA device after $ms ms"
rc=0; "$NCCL" --client 10.0.0.1 2>"$TEST_TMP/noid.err" || rc=$?
assert_eq "$rc" 2 "a client without the unique id"
assert_contains "$(cat "$TEST_TMP/noid.err")" "SPARKD_PROBE_NCCL_ID" "its message"

two_probe_nodes

step "probe-kinds describes nccl's parameters"
kinds=$(sparkc_of a --json probe-kinds)
assert_eq "$(json_get "$kinds" '[p["type"] for k in d["kinds"] if k["name"] == "nccl" for p in k["params"] if p["name"] in ("iters", "mode", "env")]')" \
        "['integer', 'string', 'list']" "parameter types"
assert_contains "$(sparkc_of a probe-kinds)" 'mode            environment mode: ["auto","safe","dmabuf"], default "auto"' "listing"

step "sparkc probe --kind nccl: unavailable, with the reason"
rc=0; out=$(sparkc_of a --json probe --peer b --kind nccl --env NCCL_P2P_DISABLE=1) || rc=$?
assert_eq "$rc" 2 "exit status of an unavailable kind asked for by name"
assert_eq "$(json_get "$out" 'd["status"]')" unavailable "status"
assert_contains "$(json_get "$out" 'd["error"]')" "no CUDA device" "reason"
table=$(sparkc_of a probe --peer b --kind nccl) || true
assert_contains "$table" "unavailable" "the table"

step "--kind all does not count it"
rc=0; out=$(sparkc_of a --json probe --peer b --kind all --duration 1) || rc=$?
assert_eq "$rc" 0 "exit status of --kind all"
assert_eq "$(json_get "$out" '{r["kind"]: r["status"] for r in d}')" "{'rtt': 'ok', 'tcp': 'ok', 'nccl': 'unavailable', 'rdma': 'unavailable', 'pathmtu': 'ok'}" "statuses"
assert_eq "$(grep -c 'event=probe-failed.*kind=nccl' "$(log_of a)" || true)" 0 "probe-failed alerts for an unavailable kind"
assert_contains "$(cat "$(log_of a)")" "nccl probe to b unavailable: " "the notice instead"

step "bad parameters are refused with the reason"
rc=0; err=$(sparkc_of a probe --peer b --kind nccl --env LD_PRELOAD=/tmp/x.so 2>&1) || rc=$?
assert_eq "$rc" 2 "an environment name a probe may not set"
assert_contains "$err" "only NCCL_ and CUDA_ variables may be set, not LD_PRELOAD" "its message"
rc=0; err=$(sparkc_of a probe --peer b --kind nccl --env NCCL_NET_PLUGIN=/tmp/x.so 2>&1) || rc=$?
assert_contains "$err" "names a file or a plugin" "a plugin path"
rc=0; err=$(sparkc_of a probe --peer b --kind nccl --mode fast 2>&1) || rc=$?
assert_contains "$err" "mode is one of auto, safe, dmabuf" "a mode that does not exist"
rc=0; err=$(sparkc_of a probe --peer b --kind nccl --param min_bytes=2M --param max_bytes=1M 2>&1) || rc=$?
assert_contains "$err" "min_bytes is above its max_bytes" "sizes the wrong way round"
rc=0; err=$(sparkc_of a probe --peer b --kind nccl --param ops=all_reduce --param ops=broadcast 2>&1) || rc=$?
assert_contains "$err" 'ops is one of all_reduce, all_gather, not "broadcast"' "an op that does not exist"

step "a GPU peer's unique id reaches the client helper, each side with its node's environment"
id=$(python3 -c 'print("ab" * 128)')
mkdir "$TEST_TMP/peer" "$TEST_TMP/here"
# The peer stands in for a GPU node: it records how sparkd started it and prints what
# sparkd-probe-nccl prints there once CUDA is up, then waits to be stopped.
cat >"$TEST_TMP/peer/sparkd-probe-nccl" <<EOF
#!/bin/sh
{ echo "ARGS \$*"; env | grep -E '^(SPARKD_PROBE_|NCCL_)' | sort; } >"$TEST_TMP/server.env"
echo '{"phase":"listening","nccl_id":"$id","nranks":2}'
exec sleep 47.25 # the peer helper stays up until sparkd stops it
EOF
cat >"$TEST_TMP/here/sparkd-probe-nccl" <<EOF
#!/bin/sh
{ echo "ARGS \$*"; env | grep -E '^(SPARKD_PROBE_|NCCL_)' | sort; } >"$TEST_TMP/client.env"
exec "$NCCL" "\$@"
EOF
chmod +x "$TEST_TMP/peer/sparkd-probe-nccl" "$TEST_TMP/here/sparkd-probe-nccl"
peer_conf a fa 10.99.0.2 "[probe]" "helper_dir = $TEST_TMP/here" "interval = 0" "rtt_interval = 0"
peer_conf b fb 10.99.0.1 "[probe]" "helper_dir = $TEST_TMP/peer" "interval = 0" "rtt_interval = 0"
sparkc_of a reload >/dev/null || fail "reload of a"
sparkc_of b reload >/dev/null || fail "reload of b"
rc=0; out=$(sparkc_of a --json probe --peer b --kind nccl --mode safe --param ops=all_reduce \
        --env NCCL_P2P_DISABLE=1 --env NCCL_SOCKET_NTHREADS=2) || rc=$?
assert_eq "$(json_get "$out" 'd["status"]')" unavailable "status with the client's helper failing here"
assert_contains "$(json_get "$out" 'd["detail"]["error"]')" "no CUDA device" "the helper's own result"
client=$(cat "$TEST_TMP/client.env")
server=$(cat "$TEST_TMP/server.env")
assert_contains "$client" "SPARKD_PROBE_NCCL_ID=$id" "the unique id in the client's environment"
assert_contains "$client" "ARGS --json --deadline" "the client's arguments"
assert_contains "$client" "--client 10.99.0.2 --bind 10.99.0.1" "the client's arguments"
assert_not_contains "$client" "--port" "the client's arguments"
assert_contains "$client" "--op all_reduce" "the ops"
assert_not_contains "$client" "all_gather" "the ops"
assert_contains "$server" "--server --bind 10.99.0.2" "the server's arguments"
assert_not_contains "$server" "SPARKD_PROBE_NCCL_ID" "the server's environment"
for side in client server; do
        envs=$(cat "$TEST_TMP/$side.env")
        assert_contains "$envs" "NCCL_P2P_DISABLE=1" "the override on the $side side"
        assert_contains "$envs" "NCCL_SOCKET_NTHREADS=2" "the second override on the $side side"
        assert_contains "$envs" "SPARKD_PROBE_TOKEN=" "the $side's token"
        assert_contains "$envs" "SPARKD_PROBE_UNIFIED_MEMORY=0" "the $side's unified-memory fact"
        assert_contains "$envs" "SPARKD_PROBE_RDMA_DEVICES=" "the $side's RDMA devices"
done
assert_contains "$client" "NCCL_SOCKET_IFNAME==fa" "the client's socket interface"
assert_contains "$server" "NCCL_SOCKET_IFNAME==fb" "the server's socket interface"
assert_eq "$(json_get "$out" '[(v["value"], v["source"]) for v in d["environment"]["variables"] if v["name"] in ("NCCL_SOCKET_IFNAME", "NCCL_P2P_DISABLE")]')" \
        "[('=fa', 'probe'), ('1', 'override')]" "the environment in the result"
wait_until 10 sh -c "! pgrep -f '[s]leep 47.25' >/dev/null" || fail "the peer's helper outlived the probe"

step "history and metrics keep the results; both daemons serve"
assert_eq "$(json_get "$(sparkc_of a --json history --peer b --kind nccl)" 'sorted(set(r["status"] for r in d["results"]))')" \
        "['unavailable']" "nccl history"
metrics=$(sparkc_of a metrics)
assert_contains "$metrics" 'sparkd_probe_ok{peer="b",kind="nccl"} 0' "metrics"
assert_contains "$metrics" "# TYPE sparkd_probe_nccl_busbw_bytes_per_second gauge" "metrics"
if command -v promtool >/dev/null; then
        promtool check metrics <<<"$metrics" || fail "promtool rejects the metrics"
fi
sparkc_of a status >/dev/null || fail "a stopped serving"
sparkc_of b status >/dev/null || fail "b stopped serving"

step "a size that would leave too little free memory is refused with the numbers, on either side"
# Host roots whose meminfo says 20 GiB (a) and 200 GiB (b) are available; sysfs stays the real one.
for n in a b; do
        mkdir -p "$TEST_TMP/root-$n/proc"
        ln -s /sys "$TEST_TMP/root-$n/sys"
done
printf 'MemTotal:       131072000 kB\nMemAvailable:   20971520 kB\n' >"$TEST_TMP/root-a/proc/meminfo"
printf 'MemTotal:       262144000 kB\nMemAvailable:   209715200 kB\n' >"$TEST_TMP/root-b/proc/meminfo"
sparkd_stop a
sparkd_stop b
peer_conf a fa 10.99.0.2 "[probe]" "helper_dir = $TEST_TMP/here" "memory_margin = 8G" \
        "[daemon]" "host_root = $TEST_TMP/root-a"
peer_conf b fb 10.99.0.1 "[probe]" "helper_dir = $TEST_TMP/peer" "memory_margin = 197G" \
        "[daemon]" "host_root = $TEST_TMP/root-b"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
wait_peer_state a b up 5 || fail "peers not up after the restart"
rm -f "$TEST_TMP/client.env" "$TEST_TMP/server.env"
rc=0; out=$(sparkc_of a --json probe --peer b --kind nccl --param max_bytes=16G) || rc=$?
assert_eq "$(json_get "$out" 'd["status"]')" failed "status of 16 GiB with 20 GiB available and 8 GiB to keep"
err=$(json_get "$out" 'd["error"]')
assert_contains "$err" "needs 16.0 GiB (17179869184 bytes)" "what was asked"
assert_contains "$err" "has 20.0 GiB (21474836480 bytes) available" "what is available"
assert_contains "$err" "8.0 GiB (8589934592 bytes) must stay free" "the margin"
[ ! -e "$TEST_TMP/client.env" ] && [ ! -e "$TEST_TMP/server.env" ] || fail "a helper ran for a refused probe"
# 4 GiB fits on a; b must keep 197 GiB of its 200 GiB free and refuses.
rc=0; out=$(sparkc_of a --json probe --peer b --kind nccl --param max_bytes=4G) || rc=$?
assert_eq "$(json_get "$out" 'd["status"]')" failed "status of 4 GiB refused by the peer"
err=$(json_get "$out" 'd["error"]')
assert_contains "$err" "needs 4.0 GiB" "the peer's numbers: asked"
assert_contains "$err" "has 200.0 GiB" "the peer's numbers: available"
assert_contains "$err" "197.0 GiB" "the peer's numbers: margin"
[ ! -e "$TEST_TMP/server.env" ] || fail "the peer's helper ran for a refused probe"
sparkd_stop a
sparkd_stop b
pass
