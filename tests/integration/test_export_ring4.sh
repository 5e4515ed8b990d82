#!/usr/bin/env bash
# sparkc export on a ring of four of the cluster harness (Sparks with their real netdevs and
# twins, a management LAN beside the ring): sparkrun's ring is three nodes and launch-cluster.sh
# takes one ETH_IF and IB_IF for every rank, so both exports refuse (exit 1) saying so and write
# nothing, on every node.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

step "a ring of four: both exports refused, nothing written"
cluster_ring_planned 4
for i in 1 2 3 4; do
        set +e
        err=$(sparkc_of "spark$i" export sparkrun --name ring --output "$TEST_TMP/spark$i.sparkrun" 2>&1 >/dev/null)
        rc=$?
        set -e
        assert_eq "$rc" 1 "export sparkrun's exit on spark$i"
        assert_contains "$err" "refused: sparkd's cabling map is a ring of 4: sparkrun's ring is three nodes only" "spark$i's refusal"
        [ ! -e "$TEST_TMP/spark$i.sparkrun/ring.yaml" ] || fail "spark$i wrote a cluster file all the same"
        set +e
        err=$(sparkc_of "spark$i" export svd --output "$TEST_TMP/spark$i.env" 2>&1 >/dev/null)
        rc=$?
        set -e
        assert_eq "$rc" 1 "export svd's exit on spark$i"
        assert_contains "$err" "launch-cluster.sh's config takes no per-link map" "spark$i's .env refusal"
        [ ! -e "$TEST_TMP/spark$i.env" ] || fail "spark$i wrote a .env all the same"
done
echo "$err"
pass
