#!/usr/bin/env bash
# The job plan on the cluster harness (Sparks with their real netdevs, twins on a subnet each):
# a ring of four (spark1..spark4) beside a management LAN: every node prints the same digest,
# head spark1, ranks 0..3 once each, NNODES=4, the rendezvous on the management network; spark2
# stopped: within 15 s the three others drop it with one new shared digest and name it.
# (Eight on a switch: test_cluster_plan_switch.sh.)
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"


step "a ring of four Sparks, a management LAN beside it"
cluster_ring 4 spark
cluster_management_lan spark1 spark2 spark3 spark4
cluster_start
RING="spark1 spark2 spark3 spark4"
# shellcheck disable=SC2086
cluster_wait 60 cluster_plans_agree 4 $RING || { for n in $RING; do sparkc_of "$n" plan; done; fail "the ring does not agree on a plan of 4"; }
for n in $RING; do sparkc_of "$n" plan | head -1; done
assert_eq "$(cluster_plan_of spark4 'd["plane"]')" management "the ring's plane"
# shellcheck disable=SC2086
cluster_check_ranks spark1 192.168.1.1 4 $RING
before=$(cluster_plan_of spark1 'd["digest"]')

step "spark2 stopped: the others drop it within 15 s with one new digest, and name it"
sparkd_stop spark2
t0=$(date +%s)
dropped() { cluster_plans_agree 3 spark1 spark3 spark4 && [ "$(cluster_plan_of spark1 'd["digest"]')" != "$before" ]; }
cluster_wait 15 dropped || fail "the three others do not agree on a plan of 3 within 15 s"
echo "dropped after $(($(date +%s) - t0)) s"
for n in spark1 spark3 spark4; do
        assert_contains "$(sparkc_of "$n" hostfile 2>&1 >/dev/null)" "left out spark2" "$n's hostfile names spark2"
done
cluster_check_ranks spark1 192.168.1.1 3 spark1 spark3 spark4
pass
