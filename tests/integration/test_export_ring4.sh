#!/usr/bin/env bash
# sparkc export and sparkd's kept files ([export] directory) on a ring of four of the cluster
# harness (Sparks with their real netdevs and twins, a management LAN beside the ring):
# - sparkrun's ring is three nodes: export sparkrun refuses (exit 1) saying so and writes
#   nothing, and no node keeps a sparkrun file;
# - launch-cluster.sh's .env: on every node CLUSTER_NODES goes round the ring as cabled, this
#   node first, the same ring on every node; CLUSTER_LINKS is the same on every node, one entry
#   per cable and twin with both ends' addresses as laid; the kept file is what export writes;
#   the gate passes it, and fails another node's .env copied here (exit 2) naming that node;
# - spark4 stopped: the map is no ring (mixed), every other node's kept .env is removed and the
#   gate fails the old one (exit 2) saying why.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"
. "$TESTS_DIR/lib_export.sh"

export_config spark1 spark2 spark3 spark4

# kept NODE: NODE's kept .env is what export svd writes there now.
kept() {
        sparkc_of "$1" export svd --output "$TEST_TMP/want-$1.env" >/dev/null && cmp -s "$TEST_TMP/want-$1.env" "$(export_dir "$1")/svd.env"
}

step "a ring of four: no sparkrun file, refused saying why"
cluster_ring_planned 4
for i in 1 2 3 4; do
        set +e
        err=$(sparkc_of "spark$i" export sparkrun --name ring --output "$TEST_TMP/spark$i.sparkrun" 2>&1 >/dev/null)
        rc=$?
        set -e
        assert_eq "$rc" 1 "export sparkrun's exit on spark$i"
        assert_contains "$err" "refused: sparkd's cabling map is a ring of 4: sparkrun's ring is three nodes only" "spark$i's refusal"
        [ ! -e "$TEST_TMP/spark$i.sparkrun/ring.yaml" ] || fail "spark$i wrote a cluster file all the same"
done
echo "$err"

step "each node's .env: the ring from this node, every cable's twins in CLUSTER_LINKS"
for i in 1 2 3 4; do
        cluster_wait 30 kept "spark$i" || fail "spark$i's kept .env: $(cat "$(export_dir "spark$i")/svd.env" 2>&1)"
        [ ! -e "$(export_dir "spark$i")/sparkd.yaml" ] || fail "spark$i keeps a sparkrun file for a ring of four"
        sparkc_of "spark$i" env --check --for svd "$(export_dir "spark$i")/svd.env" || fail "the gate fails spark$i's .env"
done
cat "$(export_dir spark1)/svd.env"
# The harness cables node i's port 0 to node i+1's port 1, cable i's twins on 10.10.i.0/24 and
# 10.11.i.0/24 (.1 at node i); the management LAN has node i at 192.168.1.i.
python3 - "$TEST_TMP" <<'PY' || fail "the .env files are not the ring as laid"
import json, shlex, sys
tmp = sys.argv[1]
want_links = []
for i in range(1, 5):
    j = i % 4 + 1
    for t in (10, 11):
        want_links.append({"192.168.1.%d" % i: "10.%d.%d.1" % (t, i), "192.168.1.%d" % j: "10.%d.%d.2" % (t, i)})
ring = ["192.168.1.%d" % i for i in range(1, 5)]
links = None
for i in range(1, 5):
    env = dict(l.split("=", 1) for l in open("%s/spark%d.export/svd.env" % (tmp, i)).read().splitlines() if l and l[0] != "#")
    env = {k: shlex.split(v)[0] for k, v in env.items()}
    nodes = env["CLUSTER_NODES"].split(",")
    assert env["LOCAL_IP"] == "192.168.1.%d" % i == nodes[0], env
    k = nodes.index("192.168.1.1")
    turned = nodes[k:] + nodes[:k]
    assert turned in (ring, ring[:1] + ring[:0:-1]), nodes  # round the ring, either way
    got = json.loads(env["CLUSTER_LINKS"])
    assert sorted(sorted(l.items()) for l in got) == sorted(sorted(l.items()) for l in want_links), got
    assert links in (None, got), "CLUSTER_LINKS differs between nodes"
    links = got
    print("spark%d: CLUSTER_NODES=%s, %d links" % (i, env["CLUSTER_NODES"], len(got)))
PY

step "another node's .env copied: exit 2, naming the node it came from"
set +e
out=$(sparkc_of spark2 env --check --for svd "$(export_dir spark3)/svd.env")
rc=$?
set -e
echo "$out"
assert_eq "$rc" 2 "the gate's exit on spark3's .env on spark2"
assert_contains "$out" "this .env is spark3's, copied to this node" "the gate names the copy"
cp "$(export_dir spark1)/svd.env" "$TEST_TMP/old.env"

step "spark4 stopped: no ring, no node keeps a .env, the gate says why"
sparkd_stop spark4
gone() { for i in 1 2 3; do [ ! -e "$(export_dir "spark$i")/svd.env" ] || return 1; done; }
cluster_wait 30 gone || fail "a kept .env outlived the ring: $(ls "$(export_dir spark1)")"
grep 'export: no svd file' "$(log_of spark1)" | tail -1
set +e
out=$(sparkc_of spark1 env --check --for svd "$TEST_TMP/old.env")
rc=$?
set -e
echo "$out"
assert_eq "$rc" 2 "the gate's exit on the old .env"
assert_contains "$out" "sparkd's cabling map is mixed" "the gate says why"
pass
