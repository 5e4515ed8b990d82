#!/usr/bin/env bash
# The job plan on the cluster harness: eight Sparks on a switch (tor1, each port 0's twins on
# 10.20.1.N and 10.21.1.N) with [cluster] head = spark6: every node prints the same digest, head
# spark6 at its first twin's address, ranks 0..7 once each, NNODES=8, the rendezvous on the
# fabric; spark3 stopped: within 15 s the seven others drop it with one new shared digest.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"


step "eight Sparks on tor1, [cluster] head = spark6"
cluster_switch tor1
for i in 1 2 3 4 5 6 7 8; do
        cluster_node "spark$i"
        cluster_plug "spark$i" 0 tor1
done
cluster_start "[cluster]" "head = spark6"
ALL="spark1 spark2 spark3 spark4 spark5 spark6 spark7 spark8"
# shellcheck disable=SC2086
cluster_wait 90 cluster_plans_agree 8 $ALL || { for n in $ALL; do sparkc_of "$n" plan | head -3; done; fail "the eight do not agree on a plan of 8"; }
for n in $ALL; do sparkc_of "$n" plan | head -1; done
assert_eq "$(cluster_plan_of spark2 'd["plane"]')" fabric "the switch's plane"
assert_eq "$(cluster_plan_of spark2 'd["head"]["why"]')" "[cluster] head names it" "the head's why"
# shellcheck disable=SC2086
cluster_check_ranks spark6 10.20.1.6 8 $ALL
before=$(cluster_plan_of spark1 'd["digest"]')

step "spark3 stopped: the seven others drop it within 15 s with one new digest"
sparkd_stop spark3
SEVEN="spark1 spark2 spark4 spark5 spark6 spark7 spark8"
t0=$(date +%s)
# shellcheck disable=SC2086
dropped() { cluster_plans_agree 7 $SEVEN && [ "$(cluster_plan_of spark1 'd["digest"]')" != "$before" ]; }
cluster_wait 15 dropped || fail "the seven others do not agree on a plan of 7 within 15 s"
echo "dropped after $(($(date +%s) - t0)) s"
assert_contains "$(cluster_plan_of spark8 '[l["reason"] for l in d["left_out"] if l["name"] == "spark3"][0]')" \
        "its summary is stale" "spark8 names spark3 with why"
# shellcheck disable=SC2086
cluster_check_ranks spark6 10.20.1.6 7 $SEVEN
pass
