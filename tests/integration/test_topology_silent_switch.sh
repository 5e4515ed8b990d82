#!/usr/bin/env bash
# Four nodes on a bridge that neither speaks nor forwards LLDP (a plain Linux bridge: no lldpd on
# it, and it keeps LLDP's link-local group to itself), lldpd running on every node. lldpd hears
# nothing, but the peer channel reaches every other node through p0: the port faces a switch
# silent to LLDP, the same one on every node, so every node derives one switch of four links and
# the doctor's topology check passes (it failed "links missing" for every node). LLDP silence is
# not a missing cable.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"

step "a bridge without LLDP, four nodes cabled to it, lldpd and sparkd on each"
hub=$(netns_new hub)
ip -n "$hub" link add br0 type bridge
ip -n "$hub" link set br0 up
declare -a NS=()
for i in 0 1 2 3; do
        NS[i]=$(netns_new "n$i")
        veth_pair "${NS[i]}" p0 "$hub" "sw$i" "10.81.0.$((i + 1))/24"
        ip -n "$hub" link set "sw$i" mtu 9000
        ip -n "$hub" link set "sw$i" master br0
done
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
for i in 0 1 2 3; do
        static=""
        for j in 0 1 2 3; do [ $j = $i ] || static="$static 10.81.0.$((j + 1))"; done
        lldp_node_start "n$i" "${NS[i]}" "p0" "$static"
done
wait_pairs up 20 "n0 n1" "n0 n2" "n0 n3" "n1 n2" "n1 n3" "n2 n3"

step "p0 faces the silent switch, from the peer channel"
for i in 0 1 2 3; do
        wait_until 20 ports_heard n$i 1 || fail "n$i: no neighbour on p0: $(sparkd_call n$i neighbours)"
        assert_eq "$(neighbour_of n$i p0 "(nb['source'], nb['sysname'], nb['lldp_silent'], nb['node_id'])")" \
                "('peer', 'silent switch 10.81.0.0/24', True, None)" "n$i's neighbour on p0"
done

step "every node derives one switch of four links, and the topology check passes"
wait_until 30 maps_agree switch 4 4 n0 n1 n2 n3 || { maps_report n0 n1 n2 n3; fail "the maps differ or are not a switch of 4"; }
for i in 0 1 2 3; do
        doctor=$(sparkc_of n$i --json doctor) || true
        assert_eq "$(json_get "$doctor" "[c['status'] for c in d['checks'] if c['id'] == 'topology'][0]")" ok "n$i: topology"
done
assert_eq "$(json_get "$(topology_of n0)" "(d['findings'], sorted(l['b'].get('switch') for l in d['links']))")" \
        "([], ['silent switch 10.81.0.0/24', 'silent switch 10.81.0.0/24', 'silent switch 10.81.0.0/24', 'silent switch 10.81.0.0/24'])" \
        "n0's map: no finding, every link to the silent switch"
pass
