#!/usr/bin/env bash
# A ring of four nodes with the netdevs a DGX Spark has: each node's host root is a copy of the
# spark-twins tree, so enp1s0f0np0/enP2p1s0f0np0 (0000:01:00.0, 0002:01:00.0) are port 0 and
# enp1s0f1np1/enP2p1s0f1np1 port 1, and veths of those names carry the cables: node i's port 0
# to node i+1's port 1, each twin to the twin of the same domain, one subnet per twin pair.
# enP2... sorts before enp1..., so numbering by name order made 8 links of the 4 cables and a
# same-twin finding; numbered from the PCI functions, every node derives a ring of 4 links.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"

step "four nodes in a ring, each with the four netdevs of a Spark and lldpd"
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
declare -a NS=()
for i in 0 1 2 3; do
        NS[i]=$(netns_new "n$i")
        cp -a "$TESTS_DIR/../fixtures/hosts/spark-twins" "$TEST_TMP/n$i.host"
done
for i in 0 1 2 3; do
        j=$(((i + 1) % 4))
        veth_pair "${NS[i]}" enp1s0f0np0 "${NS[j]}" enp1s0f1np1 10.78.$i.1/24 10.78.$i.2/24
        veth_pair "${NS[i]}" enP2p1s0f0np0 "${NS[j]}" enP2p1s0f1np1 10.79.$i.1/24 10.79.$i.2/24
done
for i in 0 1 2 3; do
        lldp_node_start "n$i" "${NS[i]}" "en*" "10.78.$i.2 10.78.$(((i + 3) % 4)).1" \
                "[daemon]" "host_root = $TEST_TMP/n$i.host"
done
for n in n0 n1 n2 n3; do
        wait_until 30 ports_heard $n 4 || fail "$n: lldpd did not hear all four netdevs"
done
step "the ports are the PCI functions: both twins of a port on one rail"
ports=$(sparkd_call n0 neighbours)
assert_eq "$(json_get "$ports" "sorted((p['netdev'], p['rail']) for p in d['ports'])")" \
        "[('enP2p1s0f0np0', 0), ('enP2p1s0f1np1', 1), ('enp1s0f0np0', 0), ('enp1s0f1np1', 1)]" "n0's rails"
step "every node derives one ring of four links, one per cable, and no finding"
wait_until 30 maps_agree ring 4 4 n0 n1 n2 n3 || { maps_report n0 n1 n2 n3; fail "the maps differ or are not a ring of 4"; }
assert_eq "$(json_get "$(topology_of n2)" "(len(d['findings']), sorted(len(l['a']['twins']) for l in d['links']))")" \
        "(0, [2, 2, 2, 2])" "n2's findings and twins per link"
for n in n0 n1 n2 n3; do
        doctor=$(sparkc_of $n --json doctor) || true
        for id in topology twin-subnets; do
                assert_eq "$(json_get "$doctor" "[c['status'] for c in d['checks'] if c['id'] == '$id'][0]")" ok "$n: $id"
        done
done
pass
