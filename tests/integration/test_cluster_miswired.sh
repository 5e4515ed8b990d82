#!/usr/bin/env bash
# Rings cabled wrong, on the cluster harness, side by side: a ring of three whose first cable
# joins port 0 to port 0 (and so another joins port 1 to port 1), and a ring of four meant as one
# ([cluster] topology = ring, nodes = 4) with a cable missing. Each gives exactly its own finding
# on every node's map and doctor, naming the ports: ring-wiring (failed) for the first,
# missing-link (failed) for the second; no other check fails or warns. The miswired ring drawn
# with `--format dot` has its bad cables in red, labelled with the finding.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

step "a ring of three with port 0 to port 0, a ring of four with a cable missing"
for i in 1 2 3; do cluster_node "w$i"; done
cluster_cable w1 0 w2 0
cluster_cable w2 1 w3 1
cluster_cable w3 0 w1 1
for i in 1 2 3 4; do cluster_node "c$i"; done
cluster_cable c1 0 c2 1
cluster_cable c2 0 c3 1
cluster_cable c3 0 c4 1
for i in 1 2 3 4; do CL_EXTRA[c$i]=$'[cluster]\ntopology = ring\nnodes = 4'; done
start=$(date +%s%N)
cluster_start

# only_finding NODE ID STATUS: NODE's map has exactly that one finding.
only_finding() { [ "$(cluster_findings "$1")" = "$2:$3" ]; }
# doctor_only_topology NODE: the topology check is NODE's only one that fails or warns, and fails.
doctor_only_topology() {
        local bad
        bad=$(cluster_doctor_clean "$1")
        [ "$(cut -d' ' -f1-2 <<<"$bad")" = "topology fail:" ]
}

step "the miswired ring: ring-wiring, and nothing else, on every node"
for n in w1 w2 w3; do
        cluster_wait 40 only_finding $n ring-wiring failed || { maps_report $n; fail "$n's findings: $(cluster_findings $n)"; }
done
echo "ring-wiring on every node after $((($(date +%s%N) - start) / 1000000)) ms"
for n in w1 w2 w3; do
        cluster_wait 15 doctor_only_topology $n || fail "$n's doctor: $(cluster_doctor_clean $n)"
        text=$(doctor_text $n)
        assert_contains "$text" "ring not cabled port 0 to port 1" "$n's doctor"
        assert_contains "$text" "w1:enP2p1s0f0np0 (port 0)" "$n's doctor"
        assert_contains "$text" "w2:enP2p1s0f0np0 (port 0)" "$n's doctor"
        assert_contains "$text" "port 0 goes to the next node's port 1" "$n's doctor"
done
wait_until 10 logged w1 wiring-problem || fail "no wiring-problem event on w1"

step "the ring with a cable missing: missing-link, and nothing else, on every node"
for n in c1 c2 c3 c4; do
        cluster_wait 40 only_finding $n missing-link failed || { maps_report $n; fail "$n's findings: $(cluster_findings $n)"; }
done
for n in c1 c2 c3 c4; do
        cluster_wait 15 doctor_only_topology $n || fail "$n's doctor: $(cluster_doctor_clean $n)"
        text=$(doctor_text $n)
        assert_contains "$text" "links missing for the expected ring: " "$n's doctor"
        assert_contains "$text" "c1 (1 linked node)" "$n's doctor"
        assert_contains "$text" "c4 (1 linked node)" "$n's doctor"
done
echo "missing-link on every node after $((($(date +%s%N) - start) / 1000000)) ms"

step "the miswired ring drawn: its bad cables red, with the finding"
if command -v dot >/dev/null; then
        sparkc_of w1 topology --format dot >"$TEST_TMP/w.dot" || fail "sparkc topology --format dot failed"
        dot -Tpng "$TEST_TMP/w.dot" >"$TEST_TMP/w.png" 2>"$TEST_TMP/w.dot.err" || fail "dot refused: $(cat "$TEST_TMP/w.dot.err")"
        python3 - "$TEST_TMP/w.dot" <<'PY' || { cat "$TEST_TMP/w.dot"; fail "the picture does not show the miswiring"; }
import re, sys
# The cables: edges between two nodes' ports (the legend draws its own).
edges = [l for l in open(sys.argv[1]) if re.match(r"\s*port_\S+ -- port_", l)]
assert len(edges) == 3, "%d edges for 3 cables" % len(edges)
red = [e for e in edges if re.search(r'color="?red"?', e)]
# The two cables that join like ports: w1's port 0 to w2's port 0, w2's port 1 to w3's port 1.
assert len(red) == 2, "%d red edges, expected the 2 miswired cables: %s" % (len(red), edges)
assert all("ring-wiring" in e for e in red), "a red edge without its finding: %s" % red
assert not any("ring-wiring" in e for e in edges if e not in red), "the finding on a cable cabled right"
PY
        echo "3 edges, the 2 miswired ones red with ring-wiring"
else
        echo "no dot (graphviz): the picture is not checked"
fi
pass
