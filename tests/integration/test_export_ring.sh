#!/usr/bin/env bash
# sparkc export on rings of the cluster harness (Sparks with their real netdevs and twins, a
# management LAN beside the ring, each node's default route on it):
# - a ring of three: every node writes the same sparkrun file (topology ring, the management
#   addresses the plan uses for the rendezvous, transfer_interface mgmt), byte for byte; each
#   node's .env has ETH_IF eth0 and both twins of each cabled port in IB_IF; the gate passes;
#   the files sparkd keeps ([export] directory) are those bytes, and a reload leaves them
#   untouched (bytes, mtime, inode).
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"
. "$TESTS_DIR/lib_export.sh"

step "a ring of three: one cluster file on every node, each node's .env"
export_config spark1 spark2 spark3
cluster_ring_planned 3
for i in 1 2 3; do
        sparkc_of "spark$i" export sparkrun --name ring --output "$TEST_TMP/spark$i.sparkrun" >/dev/null ||
                fail "export sparkrun on spark$i: $(sparkc_of "spark$i" export sparkrun 2>&1)"
        cmp "$TEST_TMP/spark1.sparkrun/ring.yaml" "$TEST_TMP/spark$i.sparkrun/ring.yaml" || fail "spark$i's file differs"
        sparkc_of "spark$i" export svd --output "$TEST_TMP/spark$i.env" >/dev/null || fail "export svd on spark$i: $(sparkc_of "spark$i" export svd 2>&1)"
        (
                set -a
                . "$TEST_TMP/spark$i.env"
                [ "$CLUSTER_NODES" = 192.168.1.1,192.168.1.2,192.168.1.3 ] && [ "$LOCAL_IP" = "192.168.1.$i" ] &&
                        [ "$ETH_IF" = eth0 ]
        ) || fail "spark$i's .env: $(cat "$TEST_TMP/spark$i.env")"
        sparkc_of "spark$i" env --check --for svd "$TEST_TMP/spark$i.env" || fail "the gate fails spark$i's .env"
        sparkc_of "spark$i" env --check --for sparkrun "$TEST_TMP/spark1.sparkrun/ring.yaml" || fail "the gate fails the file on spark$i"
done
cat "$TEST_TMP/spark1.sparkrun/ring.yaml" "$TEST_TMP/spark2.env"
assert_contains "$(cat "$TEST_TMP/spark1.sparkrun/ring.yaml")" 'topology: "ring"' "the ring's topology"
assert_contains "$(cat "$TEST_TMP/spark1.sparkrun/ring.yaml")" 'transfer_interface: "mgmt"' "the management plane"
python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert d["hosts"] == ["192.168.1.1", "192.168.1.2", "192.168.1.3"] and d["topology"] == "ring", d' \
        "$TEST_TMP/spark1.sparkrun/ring.yaml" || fail "the ring's file as YAML"

step "the files sparkd keeps: the same bytes, untouched while the plan holds"
export_wait_current 30 spark1 spark2 spark3
assert_eq "$(export_hosts spark3)" 192.168.1.1,192.168.1.2,192.168.1.3 "the kept hosts, the head first"
export_untouched spark1 spark2 spark3
pass
