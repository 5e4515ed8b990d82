#!/usr/bin/env bash
# sparkc export and sparkd's kept files ([export] directory) on a pair of the cluster harness (two
# Sparks, one cable from port 0 to port 0, both twins on their own /24; port 0 to port 1 would
# give the nodes different netdevs, which launch-cluster.sh's one ETH_IF cannot hold):
# - both nodes keep the same sparkrun file (topology switch, sparkrun's name for two nodes cabled
#   directly; transfer_interface cx7; hosts the plan's fabric addresses, the head first) and
#   each its own .env (LOCAL_IP its own), what sparkc export writes there; the gate passes both;
# - a reload leaves them untouched (bytes, mtime, inode);
# - the other node's .env copied here: the gate fails it (exit 2) naming that node.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"
. "$TESTS_DIR/lib_export.sh"

step "a pair: one cluster file on both nodes, each node's .env"
export_config spark1 spark2
cluster_node spark1
cluster_node spark2
cluster_cable spark1 0 spark2 0
cluster_start
cluster_wait 60 cluster_plans_agree 2 spark1 spark2 || fail "no plan of 2"
cluster_wait_map pair 60 spark1 spark2
export_wait_current 30 spark1 spark2
cat "$(export_dir spark1)/sparkd.yaml" "$(export_dir spark2)/svd.env"
python3 - "$(export_dir spark1)/sparkd.yaml" "$(export_dir spark2)/svd.env" <<'PY' || fail "the pair's files"
import shlex, sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
h = d["hosts"]
# the plan's fabric plane: one of the cable's twin subnets, spark1 (.1, the head) first
assert len(h) == 2 and h[0].rsplit(".", 1) == [h[1].rsplit(".", 1)[0], "1"] and h[1].endswith(".2"), h
assert h[0].startswith(("10.10.1.", "10.11.1.")), h
assert d["topology"] == "switch" and d["transfer_interface"] == "cx7" and d["name"] == "sparkd", d
env = {k: shlex.split(v)[0] for k, v in (l.split("=", 1) for l in open(sys.argv[2]).read().splitlines() if l and l[0] != "#")}
assert env["CLUSTER_NODES"] == ",".join(h) and env["LOCAL_IP"] == h[1], env
assert "CLUSTER_LINKS" not in env, env
print("hosts", h, "| spark2's LOCAL_IP", env["LOCAL_IP"], "ETH_IF", env["ETH_IF"], "IB_IF", env["IB_IF"])
PY
for n in spark1 spark2; do
        sparkc_of "$n" env --check --for svd "$(export_dir "$n")/svd.env" || fail "the gate fails $n's kept .env"
        sparkc_of "$n" env --check --for sparkrun "$(export_dir "$n")/sparkd.yaml" || fail "the gate fails $n's kept file"
done

step "the plan holds: a reload leaves both files untouched"
export_untouched spark1 spark2

step "spark2's .env copied to spark1: exit 2, naming spark2"
set +e
out=$(sparkc_of spark1 env --check --for svd "$(export_dir spark2)/svd.env")
rc=$?
set -e
echo "$out"
assert_eq "$rc" 2 "the gate's exit on spark2's .env on spark1"
assert_contains "$out" "this .env is spark2's, copied to this node" "the gate names the copy"
pass
