#!/usr/bin/env bash
# A ring of three nodes cabled right (each node's p0 to the next node's p1), each with its own
# lldpd: every node's neighbours agree with lldpcli, every node derives the same ring map, the
# doctor's topology check passes; then a cable moved to another node (a veth end moved into
# another namespace) shows in every map and in the journal within 10 s.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"

step "three nodes in a ring, lldpd on each"
ring_make 3
ring_start 3
for n in n0 n1 n2; do
        wait_until 30 ports_heard $n 2 || fail "$n: lldpd did not hear both neighbours: $(sparkd_call $n neighbours)"
done

step "sparkd's neighbours are lldpcli's"
for n in n0 n1 n2; do
        lldp_agrees $n || fail "$n: sparkd and lldpcli disagree"
done
assert_eq "$(neighbour_of n0 p0 "(nb['sysname'], nb['port_descr'], nb['source'], nb['node_id'] is not None)")" \
        "('n1', 'p1', 'lldp', True)" "n0's neighbour on p0"
out=$(sparkc_of n0 neighbours)
assert_contains "$out" "lldpd running, this node's chassis" "sparkc neighbours"
grep -qE '^p0 +0 +10G +up +n1 +p1 +10G +lldp +[0-9a-f]{8}$' <<<"$out" || fail "sparkc neighbours has no row p0 -> n1 p1: $out"

step "every node derives the same ring"
wait_until 30 maps_agree ring 3 3 n0 n1 n2 || { maps_report n0 n1 n2; fail "the maps differ or are not a ring of 3"; }
out=$(sparkc_of n0 --json doctor || true)
assert_eq "$(json_get "$out" "[c['status'] for c in d['checks'] if c['id'] == 'topology']")" "['ok']" "topology check"
assert_eq "$(json_get "$out" "[c['status'] for c in d['checks'] if c['id'] == 'lldpd']")" "['ok']" "lldpd check"
# The event waits for the map to hold still (2 s), so it may come after the maps agree.
wait_until 10 logged n0 topology-changed || fail "no topology-changed event on n0"

step "a cable moved: n1's end of link 0 into n2"
marks=()
for n in n0 n1 n2; do marks+=("$(log_lines $n)"); done
# lldpd and sparkd see the move as the interface leaving n1 and a new one appearing in n2.
ip -n "${RING_NS[1]}" link set p1 down
ip -n "${RING_NS[1]}" link set p1 name p2
start=$(date +%s%N)
ip -n "${RING_NS[1]}" link set p2 netns "${RING_NS[2]}"
ip -n "${RING_NS[2]}" link set p2 up
for n in n0 n1 n2; do
        wait_until 10 has_link $n n0:p0 n2:p2 || { maps_report $n; fail "$n's map lacks n0:p0 <-> n2:p2 10 s after the move"; }
done
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
echo "the moved cable is in every node's map after $elapsed_ms ms"
[ "$elapsed_ms" -le 10000 ] || fail "the moved cable took $elapsed_ms ms to reach every map"
changed_since() { tail -n +"$(($2 + 1))" "$(log_of "$1")" | grep -q " event=topology-changed"; }
i=0
for n in n0 n1 n2; do
        wait_until 10 changed_since $n "${marks[i]}" || fail "$n logged no topology-changed after the move"
        i=$((i + 1))
done
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
echo "every node's journal has the change after $elapsed_ms ms"
[ "$elapsed_ms" -le 10000 ] || fail "the moved cable took $elapsed_ms ms to reach every node's journal"
pass
