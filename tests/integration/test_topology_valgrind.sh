#!/usr/bin/env bash
# The LLDP watch under valgrind: two Sparks of the cluster harness (port 0 to port 0) with lldpd read, the map derived, lldpd stopped (the
# watch loses both connections) and started again (it reconnects): no memory errors and no
# leaks, and both daemons stop cleanly.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"
. "$(dirname "$0")/lib_lldp.sh"
. "$(dirname "$0")/lib_cluster.sh"

sparkd_under_valgrind
step "two nodes under valgrind, each with its lldpd"
cluster_node a
cluster_node b
cluster_cable a 0 b 0
# A slow heartbeat: a daemon under valgrind runs many times slower than it would.
cluster_start "[peers]" "heartbeat_interval = 1s" "timeout = 10s"
a=${CL_NS[a]}
wait_until 60 maps_agree pair 2 1 a b || { maps_report a b; fail "the maps differ or are not a pair"; }
sparkc_of a doctor >/dev/null || true

step "lldpd stops and starts again"
kill "$(pid_of lldpd-a)"
lldpd_absent() { [ "$(json_get "$(sparkd_call a neighbours)" "d['lldpd']")" = absent ]; }
wait_until 30 lldpd_absent || fail "a's lldpd stopped but its table says $(sparkd_call a neighbours)"
lldpd_start a "$a" 'en*'
wait_until 60 neighbour_is a enp1s0f0np0 "nb['source']" lldp || fail "a did not read lldpd again: $(sparkd_call a neighbours)"

step "both stop cleanly, valgrind found nothing"
sparkd_stop a
sparkd_stop b
for f in "$TEST_TMP"/valgrind-*.log; do
        [ ! -s "$f" ] || fail "valgrind: $(cat "$f")"
done
pass
