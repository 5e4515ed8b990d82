#!/usr/bin/env bash
# A ring of four nodes cabled right, lldpd on each: sparkd's neighbours agree with lldpcli on
# every node, and every node derives the same ring of four, also of the two nodes it has no
# cable to (their tables reach it through the peers between).
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"

step "four nodes in a ring, lldpd on each"
ring_make 4
ring_start 4
for n in n0 n1 n2 n3; do
        wait_until 30 ports_heard $n 2 || fail "$n: lldpd did not hear both neighbours"
        lldp_agrees $n || fail "$n: sparkd and lldpcli disagree"
done
wait_until 30 maps_agree ring 4 4 n0 n1 n2 n3 || { maps_report n0 n1 n2 n3; fail "the maps differ or are not a ring of 4"; }
pass
