#!/usr/bin/env bash
# Probes between two daemons in two namespaces: rtt and tcp give real measurements; --kind all
# runs what this build has; results are kept across a restart; a peer killed mid-probe gives a
# failure with its reason within the deadline, both daemons serving; a rate-limited link raises
# one probe-degraded alert. Queueing, cancelling and the deadline itself: test_probe_queue.sh.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
# rtt judged against a fixed 1 s, not a baseline learned from this test's first rounds: a loaded
# machine (ASan, other tests) doubles a veth's 15 us round trip, which is no fault of the probe.
two_probe_nodes "expect_rtt_us = 1000000"

step "rtt"
out=$(sparkc_of a --json probe --peer b --kind rtt) || fail "rtt probe failed: $out"
assert_eq "$(json_get "$out" 'd["status"]')" ok "rtt status"
json_get "$out" '0 < d["measured"]["min_us"] <= d["measured"]["median_us"] <= d["measured"]["p99_us"] <= d["measured"]["max_us"]' |
        grep -q True || fail "rtt numbers: $out"
assert_eq "$(json_get "$out" 'd["local"] + ">" + d["remote"]')" "10.99.0.1>10.99.0.2" "rtt path"

step "tcp, 2 streams, 2 s"
out=$(sparkc_of a --json probe --peer b --kind tcp --duration 2 --streams 2) || fail "tcp probe failed: $out"
assert_eq "$(json_get "$out" 'd["status"]')" ok "tcp status"
json_get "$out" 'd["measured"]["gbps"] > 0.1 and d["measured"]["streams"] == 2' | grep -q True ||
        fail "tcp numbers: $out"
table=$(sparkc_of a probe --peer 10.99.0.2 --kind tcp --duration 1) || fail "tcp by address"
assert_contains "$table" "Gb/s" "summary table"

step "a bandwidth probe's helpers run 10 below sparkd's priority on both nodes"
# niceness NS PATTERN: the niceness of each process of NS matching PATTERN, sorted.
niceness() { for pid in $(pids_in_ns "$1" "$2"); do awk '{print $19}' "/proc/$pid/stat"; done | sort -u; }
both_helpers() { [ -n "$(pids_in_ns "$a" 'sparkd-probe-tcp --json')" ] && [ -n "$(pids_in_ns "$b" 'sparkd-probe-tcp --json')" ]; }
own=$(awk '{print $19}' "/proc/$(pid_of a)/stat")
want=$((own + 10 > 19 ? 19 : own + 10))
sparkc_of a --json probe --peer b --kind tcp --duration 3 >"$TEST_TMP/niced.json" &
probe_pid=$!
wait_until 10 both_helpers || fail "the tcp helpers did not start"
assert_eq "$(niceness "$a" 'sparkd-probe-tcp --json') $(niceness "$b" 'sparkd-probe-tcp --json')" \
        "$want $want" "niceness of the tcp helpers (client, server)"
wait "$probe_pid" || fail "tcp probe failed: $(cat "$TEST_TMP/niced.json")"

step "--kind all runs every kind sparkd has"
kinds=$(json_get "$(sparkc_of a --json probe-kinds)" '[k["name"] for k in d["kinds"]]')
rc=0; out=$(sparkc_of a --json probe --peer b --kind all --duration 1) || rc=$?
assert_eq "$rc" 0 "exit status of --kind all"
assert_eq "$(json_get "$out" '[r["kind"] for r in d]')" "$kinds" "kinds run"
# nccl needs a GPU (test_probe_nccl.sh), rdma an RDMA device (test_probe_rdma.sh); everything else
# must measure.
assert_eq "$(json_get "$out" 'sorted(set(r["status"] for r in d if r["kind"] not in ("nccl", "rdma")))')" "['ok']" "statuses"
step "the table: a layout per kind, in line, tcp's directions, pathmtu against the MTU"
table=$(sparkc_of a probe --peer b --kind all --duration 1) || fail "--kind all as a table: $table"
assert_not_contains "$table" "rtt min/med/p99" "one kind's header over all kinds"
# Each row's STATUS stands under the header's, however long the kind's name.
awk 'NR == 1 { col = index($0, "STATUS") } /^20/ && index($0, " " $4 " ") + 1 != col { bad = 1; print }
        END { exit bad }' <<<"$table" || fail "columns out of line: $table"
grep -q '^20.* rtt .* us median' <<<"$table" || fail "rtt row: $table"
grep -A2 '^20.* tcp .* Gb/s' <<<"$table" | grep -q '^    forward .*10\.99\.0\.1 -> 10\.99\.0\.2 .*rail fa .*Gb/s .*[0-9]* retransmits' ||
        fail "tcp's forward direction: $table"
grep -A2 '^20.* tcp .* Gb/s' <<<"$table" | grep -q '^    reverse .*10\.99\.0\.2 -> 10\.99\.0\.1 .*Gb/s' ||
        fail "tcp's reverse direction: $table"
grep -q '^20.* pathmtu .*path MTU 9000 *the MTU of fa, 9000$' <<<"$table" || fail "pathmtu row: $table"
rc=0; err=$(sparkc_of a probe --peer b --kind rtt --streams 2 2>&1) || rc=$?
assert_eq "$rc" 2 "a parameter the kind does not take"
assert_contains "$err" "the rtt probe takes no streams" "its message"

step "a kind the peer cannot run is unavailable, not failed, and --kind all goes on"
mkdir "$TEST_TMP/rtt-only"
ln -s "$helpers/sparkd-probe-rtt" "$TEST_TMP/rtt-only/"
peer_conf b fb 10.99.0.1 "[probe]" "helper_dir = $TEST_TMP/rtt-only" "interval = 0" "rtt_interval = 0"
sparkc_of b reload >/dev/null || fail "reload of b"
rc=0; out=$(sparkc_of a --json probe --peer b --kind tcp --duration 1) || rc=$?
assert_eq "$rc" 2 "exit status of an unavailable kind asked for by name"
assert_eq "$(json_get "$out" 'd["status"]')" unavailable "status"
assert_contains "$(json_get "$out" 'd["error"]')" "not available on this node" "reason"
table=$(sparkc_of a probe --peer b --kind tcp --duration 1) || true
assert_contains "$table" "error: b (10.99.0.2) " "the node an error happened on"
rc=0; out=$(sparkc_of a --json probe --peer b --kind all --duration 1) || rc=$?
assert_eq "$rc" 0 "exit status of --kind all with an unavailable kind"
assert_eq "$(json_get "$out" '{r["kind"]: r["status"] for r in d}["rtt"]')" ok "rtt still runs"
peer_conf b fb 10.99.0.1 "[probe]" "helper_dir = $helpers" "interval = 0" "rtt_interval = 0"
sparkc_of b reload >/dev/null || fail "reload of b"

step "history, also after a restart"
hist=$(sparkc_of a --json history --peer b --kind tcp)
n=$(json_get "$hist" 'len(d["results"])')
[ "$n" -ge 2 ] || fail "history has $n tcp results"
sparkd_stop a
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
assert_eq "$(json_get "$(sparkc_of a --json history --peer b --kind tcp)" 'len(d["results"])')" "$n" "history after restart"
table=$(sparkc_of a history --kind tcp)
assert_contains "$table" "tcp" "history table"
grep -q '^    reverse .*Gb/s' <<<"$table" || fail "history shows tcp's directions: $table"
wait_peer_state a b up 5 || fail "peers not up after restart"

step "a non-admin may not start probes"
chmod 666 "$(sock_of a)"
rc=0; setpriv --reuid=65534 --regid=65534 --clear-groups "$SPARKC" --socket "$(sock_of a)" probe --peer b \
        >/dev/null 2>&1 || rc=$?
[ "$rc" -ne 0 ] || fail "nobody could start a probe"

step "a running probe can be cancelled"
python3 - "$(sock_of a)" <<'PY' || fail "cancel"
import json, socket, sys
def conn():
    s = socket.socket(socket.AF_UNIX); s.settimeout(30); s.connect(sys.argv[1]); return s
def lines(s):
    buf = b""
    while True:
        while b"\n" not in buf:
            chunk = s.recv(65536)
            if not chunk: return
            buf += chunk
        line, buf = buf.split(b"\n", 1)
        yield json.loads(line)
a = conn()
a.sendall(b'{"jsonrpc":"2.0","method":"probe","params":{"peer":"b","kind":"tcp","duration_s":20},"id":1}\n')
msgs = lines(a)
first = next(msgs)
assert first.get("method") == "probe-progress" and first["params"]["id"], first
c = conn()
c.sendall(json.dumps({"jsonrpc": "2.0", "method": "probe-cancel", "params": {"id": first["params"]["id"]}, "id": 2}).encode() + b"\n")
cancel = json.loads(c.recv(65536))
assert cancel["result"]["cancelled"] is True
assert cancel["result"]["api_version"] == 1, cancel
for m in msgs:
    if m.get("id") == 1:
        assert m["result"]["status"] == "failed" and m["result"]["error"] == "cancelled", m
        break
print("cancelled")
PY
no_helpers() { [ -z "$(pids_in_ns "$a" "$b" 'sparkd-probe-tcp')" ]; }
wait_until 10 no_helpers || fail "helpers left after the cancel"

step "the peer killed in the middle: failure with a reason, within the deadline"
start=$(date +%s)
sparkc_of a --json probe --peer b --kind tcp --duration 8 >"$TEST_TMP/killed.json" 2>&1 &
probe_pid=$!
helper_on_b() { [ -n "$(pids_in_ns "$b" 'sparkd-probe-tcp')" ]; }
wait_until 10 helper_on_b || fail "the probe did not start its helper on b"
kill -9 "$(pid_of b)"
wait "$probe_pid" || true
elapsed=$(($(date +%s) - start))
[ "$elapsed" -le 25 ] || fail "the failed probe took $elapsed s"
assert_eq "$(json_get "$(cat "$TEST_TMP/killed.json")" 'd["status"]')" failed "status after the peer died"
assert_contains "$(cat "$TEST_TMP/killed.json")" "error" "failure reason"
sparkc_of a status >/dev/null || fail "a stopped serving"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
wait_peer_state a b up 10 || fail "b did not come back"

step "a rate-limited link raises one probe-degraded alert"
for n in a b; do
        sed -i 's/^\[probe\]$/[probe]\nexpect_tcp_gbps = 4/' "$TEST_TMP/$n.conf"
        sparkc_of $n reload >/dev/null
done
tc -n "$a" qdisc add dev fa root tbf rate 1gbit burst 256k latency 20ms
out=$(sparkc_of a --json probe --peer b --kind tcp --duration 2) && rc=0 || rc=$?
assert_eq "$rc" 1 "exit status of a degraded probe"
assert_eq "$(json_get "$out" 'd["status"]')" degraded "status on a 1 Gb/s link"
assert_eq "$(grep -c 'event=probe-degraded' "$(log_of a)")" 1 "probe-degraded alerts"
sparkd_stop a
sparkd_stop b
pass
