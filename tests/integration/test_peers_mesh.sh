#!/usr/bin/env bash
# Three Sparks in a ring on the cluster harness (every pair of nodes joined by a cable, each
# cable and twin its own subnet): every node has both peers up, each through the port whose cable
# reaches that peer; cutting one cable (both twins' carriers) takes only that peer down, and
# restoring it brings it back through that port. Each pair connects once: only one end dials.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"
. "$(dirname "$0")/lib_lldp.sh"
. "$(dirname "$0")/lib_cluster.sh"

cluster_ring 3 m
cluster_start

step "every node sees both peers up, each through the right port"
# Node i's port 0 (enp1s0f0np0) goes to node i+1, its port 1 (enp1s0f1np1) to node i-1.
for pair in "m1 m2 enp1s0f0np0" "m1 m3 enp1s0f1np1" "m2 m3 enp1s0f0np0" "m2 m1 enp1s0f1np1" \
        "m3 m1 enp1s0f0np0" "m3 m2 enp1s0f1np1"; do
        set -- $pair
        wait_peer_state "$1" "$2" up 15 || fail "$1 does not see $2 up: $(sparkc_of "$1" peers)"
        assert_eq "$(peer_field "$1" "$2" 'p["via"]["iface"]')" "$3" "$1's port towards $2"
done

step "one connection a pair: the lower end dialled it, the other did not dial as well"
# Each end counts a connection's handshake once: 6 for the three pairs. Dialling every static
# peer at start, as both ends did before their ids were known, made two a pair and threw one away;
# a dial refused while the other daemon was still starting is no handshake.
total=0
for n in m1 m2 m3; do
        count=$(json_get "$(sparkc_of "$n" --json peers)" 'd["handshakes"]')
        echo "$n began $count handshakes"
        total=$((total + count))
done
assert_eq "$total" 6 "handshakes of the ring's three nodes until every peer was up"

step "cutting the m1-m3 cable takes only that peer down"
# The cable joins m3's port 0 to m1's port 1: pulled at m1, both twins lose their carrier.
ip -n "${CL_NS[m1]}" link set enp1s0f1np1 down
ip -n "${CL_NS[m1]}" link set enP2p1s0f1np1 down
wait_peer_state m1 m3 down 10 || fail "m3 not down on m1"
wait_peer_state m3 m1 down 10 || fail "m1 not down on m3"
assert_eq "$(peer_field m1 m2 'p["state"]')" up "m1-m2 while m1-m3 is cut"
assert_eq "$(peer_field m2 m3 'p["state"]')" up "m2-m3 while m1-m3 is cut"

step "restoring it brings the peer back"
ip -n "${CL_NS[m1]}" link set enp1s0f1np1 up
ip -n "${CL_NS[m1]}" link set enP2p1s0f1np1 up
wait_peer_state m1 m3 up 15 || fail "m3 not back on m1: $(sparkc_of m1 peers)"
wait_peer_state m3 m1 up 15 || fail "m1 not back on m3"
assert_eq "$(peer_field m1 m3 'p["via"]["iface"]')" enp1s0f1np1 "m1's port towards m3 after the repair"
for n in m1 m2 m3; do sparkd_stop "$n"; done
pass
