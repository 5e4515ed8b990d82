#!/usr/bin/env bash
# Four nodes on a bridge "switch" (tor1, with its own lldpd on its ports, as a real switch speaks
# LLDP): each node sees tor1 and its switch port on p0, agreeing with lldpcli, and every node
# derives the same switch map of four nodes. Then tor1 advertises a lower speed on one port
# (1000BASE-T in its 802.3 MAC/PHY TLV, sent as lldpd's custom TLV with the IEEE 802.3 OUI, which
# the receiving lldpd parses as the port's MAU type): that node's link is degraded with the
# link-speed finding, in every node's map and in the doctor.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"

step "a bridge in a hub namespace, four nodes cabled to it"
hub=$(netns_new hub)
ip -n "$hub" link add br0 type bridge
ip -n "$hub" link set br0 up
declare -a NS=()
for i in 0 1 2 3; do
        NS[i]=$(netns_new "n$i")
        veth_pair "${NS[i]}" p0 "$hub" "sw$i" "10.78.0.$((i + 1))/24"
        # A switch for the fabric carries jumbo frames: sparkd sets p0 to 9000, and a bridge port
        # left at 1500 would drop every full-sized segment of the peer channel.
        ip -n "$hub" link set "sw$i" mtu 9000
        ip -n "$hub" link set "sw$i" master br0
done
lldpd_start tor1 "$hub" 'sw*'

step "lldpd and sparkd on every node"
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
for i in 0 1 2 3; do
        static=""
        for j in 0 1 2 3; do [ $j = $i ] || static="$static 10.78.0.$((j + 1))"; done
        lldp_node_start "n$i" "${NS[i]}" "p0" "$static"
done
for i in 0 1 2 3; do
        wait_until 30 ports_heard n$i 1 || fail "n$i: lldpd did not hear the switch"
        lldp_agrees n$i || fail "n$i: sparkd and lldpcli disagree"
        assert_eq "$(neighbour_of n$i p0 "(nb['sysname'], nb['port_descr'], nb['node_id'])")" "('tor1', 'sw$i', None)" \
                "n$i's neighbour on p0"
done

step "every node derives the same switch map"
wait_until 30 maps_agree switch 4 4 n0 n1 n2 n3 || { maps_report n0 n1 n2 n3; fail "the maps differ or are not a switch of 4"; }

step "tor1's port sw2 advertises 1000BASE-T: the link-speed finding"
# MAC/PHY configuration/status: autonegotiation supported and on (03), advertised capabilities
# (6c01), operational MAU type 30 (001e, 1000BASE-T full duplex).
lldpcli -u "$(lldp_sock_of tor1)" configure ports sw2 lldp custom-tlv oui 00,12,0f subtype 1 oui-info 03,6c,01,00,1e >/dev/null ||
        fail "lldpd refused the custom TLV"
wait_until 15 neighbour_is n2 p0 "nb['speed_mbps']" "1000" ||
        fail "n2 does not see tor1's advertised 1000 Mb/s: $(sparkd_call n2 neighbours)"
assert_eq "$(neighbour_of n1 p0 "nb['speed_mbps']")" 10000 "n1's neighbour speed"
speed_finding() {
        local map
        map=$(topology_of "$1") || return 1
        [ "$(json_get "$map" "[(f['status'], f['ports']) for f in d.get('findings', []) if f['id'] == 'link-speed']")" = "[('warning', ['n2:p0'])]" ]
}
for n in n0 n1 n2 n3; do
        wait_until 15 speed_finding $n || { maps_report $n; fail "$n's map lacks the link-speed finding on n2:p0"; }
done
out=$(sparkc_of n2 --json doctor || true)
check=$(json_get "$out" "json.dumps([c for c in d['checks'] if c['id'] == 'topology'][0])")
assert_eq "$(json_get "$check" "d['status']")" warn "topology check status"
assert_contains "$(json_get "$check" "d['summary']")" "negotiated 1 Gb/s" "the check's summary"
pass
