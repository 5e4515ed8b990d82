#!/usr/bin/env bash
# Switches, on the cluster harness: eight Sparks with port 0 on a switch that speaks LLDP (tor1),
# and beside it four on another (tor2) where one node is cabled through its port 1. The eight
# have a switch map of exactly their cables, the same on every node, and no doctor warns or
# fails; sparkd's neighbours are lldpcli's. The four give exactly the switch-port finding, naming
# that node, on every node. Then tor1 negotiates 100G on one node's port (its 802.3 MAC/PHY TLV):
# exactly the link-speed finding, on every node of the eight, naming that port, and once 200G
# again the finding clears.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

step "eight nodes on tor1, four on tor2 (s4 through its port 1)"
cluster_switch tor1
for i in 1 2 3 4 5 6 7 8; do
        cluster_node "n$i"
        cluster_plug "n$i" 0 tor1
done
cluster_switch tor2
for i in 1 2 3 4; do
        cluster_node "s$i"
        cluster_plug "s$i" $([ $i = 4 ] && echo 1 || echo 0) tor2
done
start=$(date +%s%N)
cluster_start
echo "14 daemons started in $((($(date +%s%N) - start) / 1000000)) ms"
EIGHT="n1 n2 n3 n4 n5 n6 n7 n8"

step "the eight: a switch map of their cables, a clean doctor"
cluster_wait_map switch 60 $EIGHT
echo "every map right after $((($(date +%s%N) - start) / 1000000)) ms"
sparkc_of n1 topology
for n in n1 n5; do lldp_agrees $n || fail "$n: sparkd and lldpcli disagree"; done
assert_eq "$(neighbour_of n3 enp1s0f0np0 "(nb['sysname'], nb['port_id'], nb['speed_mbps'], nb['node_id'])")" \
        "('tor1', 'swp3', 200000, None)" "n3's neighbour on enp1s0f0np0"
assert_eq "$(neighbour_of n3 enP2p1s0f0np0 "(nb['sysname'], nb['port_id'])")" "('tor1', 'swp3')" \
        "n3's neighbour on the twin enP2p1s0f0np0"
for n in $EIGHT; do
        cluster_wait 20 cluster_doctor_clean "$n" || fail "$n's doctor: $(cluster_doctor_clean "$n")"
done
echo "every doctor clean after $((($(date +%s%N) - start) / 1000000)) ms"

# only_finding NODE ID STATUS: NODE's map has exactly that one finding.
only_finding() { [ "$(cluster_findings "$1")" = "$2:$3" ]; }
# doctor_only_topology STATUS NODE: the topology check is NODE's only one that fails or warns.
doctor_only_topology() { [ "$(cut -d' ' -f1-2 <<<"$(cluster_doctor_clean "$2")")" = "topology $1:" ]; }

step "the four on tor2: the switch-port finding naming s4, and nothing else"
for n in s1 s2 s3 s4; do
        cluster_wait 40 only_finding $n switch-port warning || { maps_report $n; fail "$n's findings: $(cluster_findings $n)"; }
        cluster_wait 15 doctor_only_topology warn $n || fail "$n's doctor: $(cluster_doctor_clean $n)"
        text=$(doctor_text $n)
        assert_contains "$text" "s4:enP2p1s0f1np1 (port 1) on the switch through another port than the others (port 0)" "$n's doctor"
done

step "tor1 negotiates 100G with n3: the link-speed finding on every node, and nothing else"
sock=$(lldp_sock_of tor1)
for t in 0 1; do
        lldpcli -u "$sock" unconfigure ports "swp3t$t" lldp custom-tlv oui 00,12,0f subtype 1 >/dev/null ||
                fail "lldpd kept its 200G TLV on swp3t$t"
        lldpcli -u "$sock" configure ports "swp3t$t" lldp custom-tlv oui 00,12,0f subtype 1 \
                oui-info "03,6c,01,00,$(printf %02x $CL_MAU_100G)" >/dev/null || fail "lldpd refused 100G on swp3t$t"
done
mark=$(date +%s%N)
for n in $EIGHT; do
        cluster_wait 20 only_finding $n link-speed warning || { maps_report $n; fail "$n's findings: $(cluster_findings $n)"; }
done
echo "the link-speed finding on all eight after $((($(date +%s%N) - mark) / 1000000)) ms"
for n in n1 n3 n8; do
        cluster_wait 15 doctor_only_topology warn $n || fail "$n's doctor: $(cluster_doctor_clean $n)"
        assert_contains "$(doctor_text $n)" "n3:enP2p1s0f0np0 <-> tor1 port swp3 negotiated 100 Gb/s on a 200 Gb/s port" "$n's doctor"
done

step "200G again: the finding clears"
for t in 0 1; do
        lldpcli -u "$sock" unconfigure ports "swp3t$t" lldp custom-tlv oui 00,12,0f subtype 1 >/dev/null
        lldpcli -u "$sock" configure ports "swp3t$t" lldp custom-tlv oui 00,12,0f subtype 1 \
                oui-info "03,6c,01,00,$(printf %02x $CL_MAU_200G)" >/dev/null || fail "lldpd refused 200G on swp3t$t"
done
no_finding() { [ -z "$(cluster_findings "$1")" ]; }
for n in $EIGHT; do
        cluster_wait 20 no_finding $n || { maps_report $n; fail "$n's findings stay: $(cluster_findings $n)"; }
done
pass
