#!/usr/bin/env bash
# The probe schedule probes cables that exist. Nodes a and b share a fabric cable; a and c peer
# over a routed path (m0, lldpd not running there, the two ends in different subnets with a route
# between them, as over a management network), so neither LLDP nor the peer channel shows a
# cable between a and c: one subnet shared with a peer would (LLDP silence is not a missing
# cable). Once the map is known, a's rtt rounds probe b and no longer c.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
step "a and b on a cable lldpd sees, a and c on one it does not"
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
a=$(netns_new a)
b=$(netns_new b)
c=$(netns_new c)
veth_pair "$a" p0 "$b" p1 10.77.0.1/24 10.77.0.2/24
veth_pair "$a" m0 "$c" m0 10.88.0.1/24 10.89.0.2/24
ip -n "$a" route add 10.89.0.0/24 dev m0
ip -n "$c" route add 10.88.0.0/24 dev m0
probe_lines=("[probe]" "helper_dir = $helpers" "rtt_interval = 2s")
for n in a b c; do
        ns=${!n}
        lldpd_start $n "$ns" 'p*'
        static=$(case $n in a) echo "10.77.0.2 10.89.0.2" ;; b) echo 10.77.0.1 ;; c) echo 10.88.0.1 ;; esac)
        peer_conf $n "p* m*" "$static" "[fabric]" "lldpd_socket = $(lldp_sock_of $n)" "${probe_lines[@]}"
        sparkd_start $n "$ns" -c "$TEST_TMP/$n.conf"
done
wait_pairs up 10 "a b" "a c"
map_known() {
        local map
        map=$(topology_of a) || return 1
        [ "$(json_get "$map" "(len(d.get('nodes', [])), len(d.get('links', [])))")" = "(3, 1)" ]
}
wait_until 30 map_known || { maps_report a; fail "a's map is not 3 nodes and the a-b link"; }

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
