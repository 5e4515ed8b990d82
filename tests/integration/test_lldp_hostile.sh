#!/usr/bin/env bash
# A host on the wire without the cluster key sends LLDP frames to n0 of two Sparks cabled port 0
# to port 0 (the cluster harness): out of n0's port 1 first twin (enp1s0f1np1) a System Name that
# is not UTF-8 (with an escape sequence and a newline), out of its second twin (enP2p1s0f1np1) a
# legal 200-byte one. n0's API still answers every command, its neighbour table shows both names
# cleaned and cut to 63 bytes, and its peer n1 keeps taking n0's summary and neighbour table: n1's
# doctor does not fail for n0, nothing in either log is refused as not UTF-8, and no raw escape
# reaches a terminal.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

step "two Sparks with lldpd, and a host on n0's port 1"
cluster_node n0
cluster_node n1
cluster_cable n0 0 n1 0
wire=$(netns_new wire)
cl_veth "${CL_NS[n0]}" enp1s0f1np1 "$(cluster_mac n0 enp1s0f1np1)" "$wire" e0 ""
cl_veth "${CL_NS[n0]}" enP2p1s0f1np1 "$(cluster_mac n0 enP2p1s0f1np1)" "$wire" e1 ""
ip -n "${CL_NS[n0]}" addr add 10.79.0.1/24 dev enp1s0f1np1
ip -n "${CL_NS[n0]}" addr add 10.79.1.1/24 dev enP2p1s0f1np1
cluster_start
wait_until 30 ports_heard n0 2 || fail "n0 did not hear n1 on both twins"
wait_peer_state n1 n0 up 20

step "the host sends its frames"
ip netns exec "$wire" python3 "$TESTS_DIR/lldp_frames.py" e0 e1 150 &
DAEMON_PIDS+=("$!")
wait_until 30 ports_heard n0 4 || fail "n0 did not hear the host: $(sparkd_call n0 neighbours 2>&1 | head -c 2000)"

step "n0's neighbour table holds both names, cleaned and cut"
assert_eq "$(neighbour_of n0 enp1s0f1np1 "nb['sysname']")" "evil??[31m err: fake" "the name that is not UTF-8"
assert_eq "$(neighbour_of n0 enp1s0f1np1 "nb['port_descr']")" "port ?( ]0;title" "its port description"
assert_eq "$(neighbour_of n0 enP2p1s0f1np1 "(nb['sysname'], len(nb['port_descr']))")" "('$(printf 'L%.0s' $(seq 63))', 63)" \
        "the 200-byte name"

step "every command of n0 answers, with no raw escape"
for cmd in neighbours topology cluster doctor peers; do
        rc=0
        sparkc_of n0 "$cmd" >"$TEST_TMP/$cmd.out" 2>"$TEST_TMP/$cmd.err" || rc=$?
        grep -q "Bad message\|not valid UTF-8" "$TEST_TMP/$cmd.err" && fail "n0 $cmd: $(cat "$TEST_TMP/$cmd.err")"
        [ "$rc" -le 2 ] || fail "n0 $cmd exited $rc: $(cat "$TEST_TMP/$cmd.err")"
        [ -s "$TEST_TMP/$cmd.out" ] || fail "n0 $cmd printed nothing: $(cat "$TEST_TMP/$cmd.err")"
        if grep -q $'\x1b' "$TEST_TMP/$cmd.out"; then fail "n0 $cmd printed a raw escape"; fi
done
assert_contains "$(cat "$TEST_TMP/neighbours.out")" "evil??[31m err: fake" "n0 neighbours"
sed 's/^/    /' "$TEST_TMP/neighbours.out"

step "n1 takes n0's summary and neighbour table"
n0_table_known() {
        local map
        map=$(sparkc_of n1 --json topology) || return 1
        [ "$(json_get "$map" "sorted(p['netdev'] for n in d['nodes'] if n['name'] == 'n0' for p in n.get('ports', []))")" = "['enP2p1s0f0np0', 'enP2p1s0f1np1', 'enp1s0f0np0', 'enp1s0f1np1']" ]
}
wait_until 20 n0_table_known || fail "n1's map lacks n0's table: $(sparkc_of n1 --json topology 2>&1 | head -c 3000)"
line=$(sparkc_of n1 doctor --format line || true)
case "$line" in *"neighbour table is not known"*) fail "n1's doctor: $line" ;; esac
assert_eq "$(peer_field n1 n0 "p['state']")" up "n0 as n1 sees it"
for n in n0 n1; do
        if grep -qi "utf-8" "$(log_of $n)"; then fail "$n logged: $(grep -i utf-8 "$(log_of $n)" | head -3)"; fi
        if grep -q $'\x1b' "$(log_of $n)"; then fail "$n's log holds a raw escape"; fi
done
pass
