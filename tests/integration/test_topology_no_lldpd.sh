#!/usr/bin/env bash
# Two Sparks on one cable (the cluster harness, port 0 to port 0) and no lldpd running (installed:
# its library is there): the doctor's lldpd check warns with how to start it,
# the peers come up, a probe runs, and the neighbour table and the map come from the peer
# channel. An lldpd started later is picked up (running, neighbours from LLDP), and one that
# stops is absent again.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

step "two nodes, their lldpd sockets with no lldpd behind them"
cluster_node a
cluster_node b
cluster_cable a 0 b 0
CL_NO_LLDPD[a]=1
CL_NO_LLDPD[b]=1
cluster_start "[probe]" "helper_dir = ${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}"
a=${CL_NS[a]} b=${CL_NS[b]}
wait_peer_state a b up 10 || fail "peers not up: $(sparkc_of a peers)"

step "the doctor says lldpd is missing and how to install it"
out=$(sparkc_of a --json doctor || true)
check=$(json_get "$out" "json.dumps([c for c in d['checks'] if c['id'] == 'lldpd'][0])")
assert_eq "$(json_get "$check" "d['status']")" warn "lldpd check status"
assert_contains "$(json_get "$check" "d['summary']")" "lldpd is not running" "the lldpd check's summary"
assert_eq "$(json_get "$check" "d['fix']")" "systemctl enable --now lldpd" "the lldpd check's fix"

step "peers and probes work as before; neighbours and the map from the peer channel"
sparkc_of a probe --peer b --kind rtt >/dev/null || fail "rtt probe a -> b failed without lldpd"
assert_eq "$(json_get "$(sparkd_call a neighbours)" "d['lldpd']")" absent "a's neighbours' lldpd"
assert_contains "$(sparkc_of a neighbours)" "lldpd absent: neighbours from the peer channel only" "sparkc neighbours"
assert_contains "$(sparkc_of a neighbours)" "lldpd is not running: nothing answers on $(lldp_sock_of a)" "sparkc neighbours"
wait_until 10 neighbour_is a enp1s0f0np0 "(nb['source'], nb['sysname'], nb['port_id'])" "('peer', 'b', 'enp1s0f0np0')" ||
        fail "a's neighbour on enp1s0f0np0 is not b's enp1s0f0np0 from the peer channel: $(sparkd_call a neighbours)"
wait_until 15 maps_agree pair 2 1 a b || { maps_report a b; fail "the maps differ or are not a pair"; }

step "an lldpd started later is picked up, one that stops is absent again"
lldpd_start a "$a" 'en*'
lldpd_start b "$b" 'en*'
# The watch connects when the socket appears.
wait_until 20 neighbour_is a enp1s0f0np0 "(nb['source'], nb['sysname'], nb['port_descr'])" "('lldp', 'b', 'enp1s0f0np0')" ||
        fail "a does not read b from lldpd: $(sparkd_call a neighbours)"
lldp_agrees a || fail "a: sparkd and lldpcli disagree"
kill "$(pid_of lldpd-a)"
lldpd_absent() { [ "$(json_get "$(sparkd_call a neighbours)" "d['lldpd']")" = absent ]; }
wait_until 10 lldpd_absent || fail "a's lldpd stopped but the table says $(sparkd_call a neighbours)"
pass
