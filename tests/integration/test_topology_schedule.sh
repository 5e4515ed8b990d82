#!/usr/bin/env bash
# The probe schedule probes cables that exist, on the cluster harness. Sparks a and b share a
# cable (a's port 0 to b's port 1, both twins); a and c peer over a routed path (a's port 1 and
# c's port 0 each cabled to a router that speaks no LLDP, each end in a subnet of its own), so
# neither LLDP nor the peer channel shows a cable between a and c: one subnet shared with a peer
# would (LLDP silence is not a missing cable). Once the map is known, a's scheduled rounds probe
# b and no longer c.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
step "a and b on a cable lldpd sees, a and c on a routed path"
cluster_node a
cluster_node b
cluster_node c
cluster_cable a 0 b 1
router=$(netns_new router)
ip netns exec "$router" sysctl -qw net.ipv4.ip_forward=1
cl_veth "${CL_NS[a]}" enp1s0f1np1 "$(cluster_mac a enp1s0f1np1)" "$router" ra ""
cl_veth "${CL_NS[c]}" enp1s0f0np0 "$(cluster_mac c enp1s0f0np0)" "$router" rc ""
ip -n "$router" addr add 10.88.0.254/24 dev ra
ip -n "$router" addr add 10.89.0.254/24 dev rc
ip -n "${CL_NS[a]}" addr add 10.88.0.1/24 dev enp1s0f1np1
ip -n "${CL_NS[c]}" addr add 10.89.0.2/24 dev enp1s0f0np0
ip -n "${CL_NS[a]}" route add 10.89.0.0/24 via 10.88.0.254
ip -n "${CL_NS[c]}" route add 10.88.0.0/24 via 10.89.0.254
CL_STATIC[a]+=" 10.89.0.2"
CL_STATIC[c]+=" 10.88.0.1"
cluster_start "[probe]" "helper_dir = $helpers" "rtt_interval = 2s"
wait_pairs up 10 "a b" "a c"
map_known() {
        local map
        map=$(topology_of a) || return 1
        [ "$(json_get "$map" "(len(d.get('nodes', [])), len(d.get('links', [])))")" = "(3, 1)" ] &&
                [ "$(cluster_map_links a)" = "a:0 b:1" ]
}
cluster_wait 30 map_known || { maps_report a; fail "a's map is not 3 nodes and the a-b cable"; }

step "a's rtt rounds go on to b and no longer to c"
scheduled_to() {
        json_get "$(sparkc_of a --json history --kind pathmtu --limit 1000)" \
                "len([r for r in d['results'] if r['scheduled'] and r['peer'] == '$1'])"
}
# A round that started before the map was known may still finish: count from the next one.
b0=$(scheduled_to b)
more_to_b() { [ "$(scheduled_to b)" -ge $(($1 + 1)) ]; }
wait_until 20 more_to_b "$b0" || fail "no scheduled probe of a to b: $(sparkc_of a history)"
c0=$(scheduled_to c)
b1=$(scheduled_to b)
wait_until 20 more_to_b "$((b1 + 1))" || fail "a's rounds to b stopped: $(sparkc_of a history)"
assert_eq "$(scheduled_to c)" "$c0" "a's scheduled probes of c, which no cable joins"
pass
