#!/bin/bash
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
ring_make 3
ring_start 3
wait_until 30 maps_agree ring 3 3 n0 n1 n2 || { maps_report n0 n1 n2; fail "maps"; }
topology_of n0 | python3 -m json.tool | head -80
sparkc_of n0 doctor | grep -A5 topology || true
pass
