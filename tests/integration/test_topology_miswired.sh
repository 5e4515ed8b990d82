#!/usr/bin/env bash
# The three-node ring with one link cabled p0<->p0 (and so another p1<->p1): every node derives
# the same map, and the doctor fails its topology check with the ring-wiring finding, naming the
# ports at both ends and the recabling that fixes it; the journal has a wiring-problem event.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"

step "three nodes in a ring, n1's cables swapped"
ring_make 3 1
ring_start 3
for n in n0 n1 n2; do
        wait_until 30 ports_heard $n 2 || fail "$n: lldpd did not hear both neighbours: $(sparkd_call $n neighbours)"
done
assert_eq "$(neighbour_of n0 p0 "(nb['sysname'], nb['port_descr'])")" "('n1', 'p0')" "n0's neighbour on p0"

step "the same map everywhere, with the ring-wiring finding"
has_ring_wiring() {
        local map
        map=$(topology_of "$1") || return 1
        [ "$(json_get "$map" "[f['status'] for f in d.get('findings', []) if f['id'] == 'ring-wiring']")" = "['failed']" ]
}
for n in n0 n1 n2; do
        wait_until 30 has_ring_wiring $n || { maps_report $n; fail "$n's map has no ring-wiring finding"; }
done
same_maps() { [ "$(topology_of n0)" = "$(topology_of n1)" ] && [ "$(topology_of n1)" = "$(topology_of n2)" ]; }
wait_until 10 same_maps || { maps_report n0 n1 n2; fail "the nodes' maps differ"; }

step "the doctor names both ports and the fix"
out=$(sparkc_of n0 --json doctor || true)
check=$(json_get "$out" "json.dumps([c for c in d['checks'] if c['id'] == 'topology'][0])")
assert_eq "$(json_get "$check" "d['status']")" fail "topology check status"
summary=$(json_get "$check" "d['summary']")
assert_contains "$summary" "n0:p0" "the check's summary"
assert_contains "$summary" "n1:p0" "the check's summary"
assert_contains "$(json_get "$check" "d['fix']")" "port 0 goes to the next node's port 1" "the check's fix"
text=$(sparkc_of n0 doctor || true)
assert_contains "$text" "ring not cabled port 0 to port 1" "sparkc doctor"
wait_until 10 logged n0 wiring-problem || fail "no wiring-problem event on n0"
assert_contains "$(grep ' event=wiring-problem' "$(log_of n0)" | grep 'finding=ring-wiring')" "n0:p0" "the wiring-problem event"
pass
