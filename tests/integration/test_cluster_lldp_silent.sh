#!/usr/bin/env bash
# Eight Sparks behind a switch that neither speaks nor forwards LLDP (an unmanaged switch, or one
# with LLDP off: no lldpd on the bridge, and a Linux bridge does not forward 01:80:c2:00:00:0e),
# lldpd running on every node, on the cluster harness. Every node hears nothing by LLDP, yet the
# peer channel reaches every other node through the switch: no doctor fails, `sparkc hostfile` on
# every node lists all eight, and every node's map draws one switch with one cable to each node
# (both twins of a port reach it through one QSFP cable, each on a subnet of its own).
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

step "eight nodes on a silent switch, lldpd on each"
cluster_switch quiet silent
NODES=""
for i in 1 2 3 4 5 6 7 8; do
        cluster_node "q$i"
        cluster_plug "q$i" 0 quiet
        NODES="$NODES q$i"
done
assert_eq "$(ip -n "${CL_SW_NS[quiet]}" -d -j link show br0 | json_get "$(cat)" 'd[0]["linkinfo"]["info_data"]["group_fwd_mask"]')" 0 \
        "the bridge's group_fwd_mask"
start=$(date +%s%N)
cluster_start
echo "8 daemons started in $((($(date +%s%N) - start) / 1000000)) ms"
for n in $NODES; do
        cluster_wait 30 cluster_peers_up $n 7 || fail "$n does not see its 7 peers up: $(sparkc_of $n peers)"
done
echo "every pair of peers up after $((($(date +%s%N) - start) / 1000000)) ms"
for n in q1 q8; do
        assert_eq "$(json_get "$(sparkd_call $n neighbours)" "(d['lldpd'], [p['neighbour'] and p['neighbour']['source'] for p in d['ports'] if p['neighbour'] and p['neighbour']['source'] == 'lldp'])")" \
                "('running', [])" "$n's lldpd, and what it hears"
done

step "no doctor fails; hostfile lists all eight on every node"
# hostfile_all NODE: NODE's hostfile (plain) lists the eight nodes, each once, by an address it
# has on the switch (node N has 10.20.1.N and, on its twin, 10.21.1.N).
hostfile_all() {
        local out
        out=$(sparkc_of "$1" hostfile --format plain 2>/dev/null) || return 1
        [ "$(wc -l <<<"$out")" = 8 ] && [ "$(sed -n 's/^10\.2[01]\.1\.\([1-8]\)$/q\1/p' <<<"$out" |
                sort | tr '\n' ' ')" = "q1 q2 q3 q4 q5 q6 q7 q8 " ]
}
for n in $NODES; do
        cluster_wait 30 cluster_doctor_passes $n || fail "$n's doctor fails behind a silent switch: $(cluster_doctor_failures $n)"
done
for n in $NODES; do
        cluster_wait 20 hostfile_all $n || { sparkc_of $n hostfile --format plain || true; fail "$n's hostfile lacks nodes"; }
done
echo "every doctor passes, every hostfile has eight after $((($(date +%s%N) - start) / 1000000)) ms"

step "every map: one switch, one cable per node"
# one_cable_each NODE: NODE's map is a switch shape of eight links, one per node, each from port
# 0 (both twins) to one switch, every link ok, no finding.
one_cable_each() {
        local map
        map=$(topology_of "$1") || return 1
        [ "$(json_get "$map" "(d['shape'], len(d['links']), sorted(l['a']['name'] for l in d['links']),
                len(set(l['b'].get('chassis_id') for l in d['links'])),
                all(sorted(l['a']['twins']) == ['enP2p1s0f0np0', 'enp1s0f0np0'] and l['state'] == 'ok' for l in d['links']),
                d['findings'])")" = \
                "('switch', 8, ['q1', 'q2', 'q3', 'q4', 'q5', 'q6', 'q7', 'q8'], 1, True, [])" ]
}
for n in $NODES; do
        cluster_wait 20 one_cable_each $n || { sparkc_of $n topology || true; fail "$n's map is not one cable per node to one switch"; }
done
sparkc_of q1 topology
pass
