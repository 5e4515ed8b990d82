#!/usr/bin/env bash
# sparkc export and sparkd's kept files ([export] directory) on a pair of the cluster harness (two
# Sparks, one cable from port 0 to port 0, both twins on their own /24; port 0 to port 1 would
# give the nodes different netdevs, which launch-cluster.sh's one ETH_IF cannot hold):
# - both nodes keep the same sparkrun file (topology switch, sparkrun's name for two nodes cabled
#   directly; transfer_interface cx7; hosts the plan's fabric addresses, the head first) and
#   each its own .env (LOCAL_IP its own), what sparkc export writes there; the gate passes both;
# - a reload leaves them untouched (bytes, mtime, inode);
# - the other node's .env copied here: the gate fails it (exit 2) naming that node;
# - the cable moved to port 1 at both ends: both files are rewritten for port 1, and the gate
#   fails the old .env (exit 2) naming ETH_IF and IB_IF, the cabling changed.
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
cp "$(export_dir spark1)/svd.env" "$TEST_TMP/old.env"

step "the cable moved to port 1 at both ends: the files follow, the gate names the change"
# Port 0's twins now unplugged (loose ends), port 1's cabled to each other on 10.1X.2.0/24; each
# host root made again from what its namespace has now, as the kernel's sysfs would show it, and
# each node's static peer the other's new address.
for n in spark1 spark2; do
        for d in enp1s0f0np0 enP2p1s0f0np0 enp1s0f1np1 enP2p1s0f1np1; do ip -n "${CL_NS[$n]}" link del "$d" 2>/dev/null || true; done
done
for t in 0 1; do
        d=$( ((t == 0)) && echo enp1s0f1np1 || echo enP2p1s0f1np1)
        cl_veth "${CL_NS[spark1]}" "$d" "$(cluster_mac spark1 "$d")" "${CL_NS[spark2]}" "$d" "$(cluster_mac spark2 "$d")"
        ip -n "${CL_NS[spark1]}" addr add "10.$((10 + t)).2.1/24" dev "$d"
        ip -n "${CL_NS[spark2]}" addr add "10.$((10 + t)).2.2/24" dev "$d"
done
for n in spark1 spark2; do
        cluster_loose "$n"
        python3 "$TESTS_DIR/cluster_host.py" "$TESTS_DIR/../fixtures/hosts/spark-twins" "$TEST_TMP/$n.host.new" spark "${CL_NS[$n]}" ||
                fail "no new host root for $n"
        fixture_nccl_as_sparkd "$TEST_TMP/$n.host.new"
        mv "$TEST_TMP/$n.host" "$TEST_TMP/$n.host.old"
        mv "$TEST_TMP/$n.host.new" "$TEST_TMP/$n.host"
        # The other end's address on the new cable as the static peer (mDNS would find it).
        sed -i 's/^static = 10\.10\.1\./static = 10.10.2./' "$TEST_TMP/$n.conf"
        kill -HUP "$(pid_of "$n")"
done
on_port1() { grep -qx 'ETH_IF="enp1s0f1np1"' "$(export_dir spark1)/svd.env" && export_current spark1 spark2; }
cluster_wait 60 on_port1 || {
        cat "$(export_dir spark1)/svd.env" || true
        sparkc_of spark1 plan || true
        fail "the kept files did not follow the cable to port 1"
}
cat "$(export_dir spark1)/svd.env"
set +e
out=$(sparkc_of spark1 env --check --for svd "$TEST_TMP/old.env")
rc=$?
set -e
echo "$out"
assert_eq "$rc" 2 "the gate's exit on the .env of port 0"
assert_contains "$out" 'ETH_IF is "enp1s0f0np0", the plan'"'"'s is "enp1s0f1np1": the cabling changed' "the gate names ETH_IF"
assert_contains "$out" 'IB_IF is "roceP2p1s0f0,rocep1s0f0", the plan'"'"'s is "roceP2p1s0f1,rocep1s0f1": the cabling changed' "the gate names IB_IF"
pass
