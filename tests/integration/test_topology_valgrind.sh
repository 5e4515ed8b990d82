#!/usr/bin/env bash
# The LLDP watch under valgrind: two nodes with lldpd read, the map derived, lldpd stopped (the
# watch loses both connections) and started again (it reconnects): no memory errors and no
# leaks, and both daemons stop cleanly.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"
. "$(dirname "$0")/lib_lldp.sh"

sparkd_under_valgrind
step "two nodes under valgrind, each with its lldpd"
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
a=$(netns_new a); b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
lldpd_start a "$a" fa; lldpd_start b "$b" fb
for n in a b; do
        other=$([ $n = a ] && echo 10.99.0.2 || echo 10.99.0.1)
        # A slow heartbeat: a daemon under valgrind runs many times slower than it would.
        peer_conf $n f$n $other "[peers]" "heartbeat_interval = 1s" "timeout = 10s" "[fabric]" "lldpd_socket = $(lldp_sock_of $n)"
done
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
wait_until 60 maps_agree pair 2 1 a b || { maps_report a b; fail "the maps differ or are not a pair"; }
sparkc_of a doctor >/dev/null || true

step "lldpd stops and starts again"
kill "$(pid_of lldpd-a)"
lldpd_absent() { [ "$(json_get "$(sparkd_call a neighbours)" "d['lldpd']")" = absent ]; }
wait_until 30 lldpd_absent || fail "a's lldpd stopped but its table says $(sparkd_call a neighbours)"
lldpd_start a "$a" fa
wait_until 60 neighbour_is a fa "nb['source']" lldp || fail "a did not read lldpd again: $(sparkd_call a neighbours)"

step "both stop cleanly, valgrind found nothing"
sparkd_stop a
sparkd_stop b
for f in "$TEST_TMP"/valgrind-*.log; do
        [ ! -s "$f" ] || fail "valgrind: $(cat "$f")"
done
pass
