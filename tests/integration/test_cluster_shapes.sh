#!/usr/bin/env bash
# The shapes cabled right, on the cluster harness (real Spark names, both twins of every port):
# a pair on one cable, a pair on two, a ring of three, a ring of four (each node's port 0 to the
# next node's port 1) and a full mesh of four two-NIC hosts, side by side. On every node sparkd's
# neighbours are lldpcli's, the map is the shape with exactly the cables laid (the same on every
# node), and the doctor has no failure and no warning. The ring of four drawn with `--format dot`
# through graphviz has one edge per cable. Then the pair's cable is pulled at one end and plugged
# back: both maps and journals follow within 15 s.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

step "a pair on one cable, a pair on two, rings of three and four, a mesh of four"
cluster_node pa1
cluster_node pa2
cluster_cable pa1 0 pa2 0
cluster_node pb1
cluster_node pb2
cluster_cable pb1 0 pb2 0
cluster_cable pb1 1 pb2 1
cluster_ring 3 ra
cluster_ring 4 rb
for i in 1 2 3 4; do cluster_node "m$i" nic2; done
# Each host's port k goes to the k-th of the other three.
for i in 1 2 3; do
        for ((j = i + 1; j <= 4; j++)); do cluster_cable "m$i" $((j - 2)) "m$j" $((i - 1)); done
done
start=$(date +%s%N)
cluster_start
echo "19 daemons started in $((($(date +%s%N) - start) / 1000000)) ms"

step "every map is the shape laid, the same on every node"
cluster_wait_map pair 40 pa1 pa2
cluster_wait_map pair 40 pb1 pb2
cluster_wait_map ring 40 ra1 ra2 ra3
cluster_wait_map ring 40 rb1 rb2 rb3 rb4
cluster_wait_map mesh 40 m1 m2 m3 m4
echo "every map right after $((($(date +%s%N) - start) / 1000000)) ms"
sparkc_of rb1 topology

step "sparkd's neighbours are lldpcli's"
for n in pa1 pb2 ra1 rb3 m2; do
        lldp_agrees $n || fail "$n: sparkd and lldpcli disagree"
done
assert_eq "$(neighbour_of ra1 enp1s0f0np0 "(nb['sysname'], nb['port_descr'], nb['source'], nb['node_id'] is not None)")" \
        "('ra2', 'enp1s0f1np1', 'lldp', True)" "ra1's neighbour on enp1s0f0np0"
out=$(sparkc_of ra1 neighbours)
assert_contains "$out" "lldpd running, this node's chassis" "sparkc neighbours"
grep -qE '^enp1s0f0np0 +0 +200G +up +ra2 +enp1s0f1np1 ' <<<"$out" || fail "sparkc neighbours has no row enp1s0f0np0 -> ra2 enp1s0f1np1: $out"
assert_eq "$(neighbour_of ra1 enP2p1s0f0np0 "(nb['sysname'], nb['port_descr'])")" "('ra2', 'enP2p1s0f1np1')" \
        "ra1's neighbour on the twin enP2p1s0f0np0"

step "the doctor passes on every node, with no warning"
for n in "${CL_NODES[@]}"; do
        cluster_wait 15 cluster_doctor_clean "$n" || fail "$n's doctor: $(cluster_doctor_clean "$n")"
done
echo "every doctor clean after $((($(date +%s%N) - start) / 1000000)) ms"

step "the ring of four drawn: one edge per cable"
if command -v dot >/dev/null; then
        sparkc_of rb1 topology --format dot >"$TEST_TMP/rb.dot" || fail "sparkc topology --format dot failed"
        dot -Tpng "$TEST_TMP/rb.dot" >"$TEST_TMP/rb.png" 2>"$TEST_TMP/rb.dot.err" || fail "dot refused: $(cat "$TEST_TMP/rb.dot.err")"
        [ "$(head -c 8 "$TEST_TMP/rb.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "dot -Tpng wrote no PNG"
        # The cables: edges between two nodes' ports (the legend draws its own).
        edges=$(grep -cE -- '^\s*port_\S+ -- port_' "$TEST_TMP/rb.dot" || true)
        [ "$edges" = 4 ] || { cat "$TEST_TMP/rb.dot"; fail "the ring of four drawn with $edges edges, not 4"; }
        echo "4 edges, $(wc -c <"$TEST_TMP/rb.png") bytes of PNG"
else
        echo "no dot (graphviz): the picture is not checked"
fi

step "the pair's cable pulled at pa2 and plugged back: the maps and journals follow"
# changed_since NODE LINE: NODE logged a topology-changed event after line LINE of its log.
changed_since() { tail -n +"$(($2 + 1))" "$(log_of "$1")" | grep -q " event=topology-changed"; }
no_links() { [ -z "$(cluster_map_links "$1")" ]; }
for state in down up; do
        marks=("$(log_lines pa1)" "$(log_lines pa2)")
        mark=$(date +%s%N)
        ip -n "${CL_NS[pa2]}" link set enp1s0f0np0 $state
        ip -n "${CL_NS[pa2]}" link set enP2p1s0f0np0 $state
        for n in pa1 pa2; do
                if [ $state = down ]; then
                        cluster_wait 10 no_links $n || { maps_report $n; fail "$n's map keeps the pulled cable"; }
                else
                        cluster_wait 10 cluster_map_is $n pair pa1 pa2 || { maps_report $n; fail "$n's map lacks the cable plugged back"; }
                fi
        done
        cluster_wait 10 changed_since pa1 "${marks[0]}" || fail "pa1 logged no topology-changed after the cable went $state"
        cluster_wait 10 changed_since pa2 "${marks[1]}" || fail "pa2 logged no topology-changed after the cable went $state"
        elapsed_ms=$((($(date +%s%N) - mark) / 1000000))
        echo "cable $state: both maps and journals after $elapsed_ms ms"
        [ "$elapsed_ms" -le 15000 ] || fail "the cable going $state took $elapsed_ms ms to reach both nodes"
done
pass
