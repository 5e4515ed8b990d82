#!/usr/bin/env bash
# sparkc export and its gate on a running cluster: three Sparks on a switch (a bridge, one /24,
# fixture hosts):
# - every node writes the same sparkrun cluster file, byte for byte, and the same bytes again
#   while the plan holds; its .env on each node has the same CLUSTER_NODES (the head first) and
#   its own LOCAL_IP; env --check --for passes both (exit 0);
# - a fourth node joins: the gate fails the old files (exit 2) naming the new node; another
#   node's .env copied here fails naming the node it came from.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"
. "$(dirname "$0")/lib_lldp.sh"

"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
declare -A NS

# spark_host NAME ADDRESS: a copy of the spark-twins host for NAME, the RoCE v2 GIDs of its
# active port (rocep1s0f1, under enp1s0f1np1) made ADDRESS's, as the kernel would.
spark_host() {
        local gid
        cp -a "$TESTS_DIR/../fixtures/hosts/spark-twins" "$TEST_TMP/host-$1"
        fixture_nccl_as_sparkd "$TEST_TMP/host-$1"
        IFS=. read -r o1 o2 o3 o4 <<<"$2"
        for gid in "$TEST_TMP/host-$1"/sys/devices/pci0000:00/0000:00:00.0/0000:01:00.1/infiniband/rocep1s0f1/ports/1/gids/[23]; do
                printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$o1" "$o2" "$o3" "$o4" >"$gid"
        done
}

plan_of() { json_get "$(sparkc_of "$1" --json plan 2>/dev/null)" "$2"; }

# agree SIZE NODE...: every NODE's plan has SIZE members and one digest shared by all.
agree() {
        local size=$1 first="" d n
        shift
        for n in "$@"; do
                d=$(plan_of "$n" 'str(d["size"]) + " " + d["digest"]')
                [ "${d% *}" = "$size" ] || return 1
                [ -n "$first" ] || first=$d
                [ "$d" = "$first" ] || return 1
        done
}

# shapes SHAPE SIZE NODE...: every NODE's env has the cabling map's SHAPE of SIZE nodes.
shapes() {
        local want="$1 $2" n
        shift 2
        for n in "$@"; do
                [ "$(json_get "$(sparkc_of "$n" --json env 2>/dev/null)" 'd["topology"]["shape"] + " " + str(d["topology"]["nodes"])')" = "$want" ] || return 1
        done
}

# start_node I: swI at 192.168.177.1I on the switch, with its own lldpd, every other of the four
# as a static peer.
sw=$(netns_new sw)
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
start_node() {
        local i=$1 n=sw$1 static="" k
        NS[$n]=$(netns_new "$n")
        ip link add enp1s0f1np1 netns "${NS[$n]}" type veth peer name "p$i" netns "$sw"
        ip -n "$sw" link set "p$i" mtu 9000 master br0 up
        ip -n "${NS[$n]}" addr add "192.168.177.$((10 + i))/24" dev enp1s0f1np1
        ip -n "${NS[$n]}" link set enp1s0f1np1 up
        for k in 1 2 3 4; do [ "$k" = "$i" ] || static="$static 192.168.177.$((10 + k))"; done
        spark_host "$n" "192.168.177.$((10 + i))"
        lldp_node_start "$n" "${NS[$n]}" enp1s0f1np1 "$static" "[daemon]" "host_root = $TEST_TMP/host-$n"
}

step "three on a switch: one cluster file on every node, the same bytes while the plan holds"
for i in 1 2 3; do start_node "$i"; done
lldpd_start tor1 "$sw" 'p*'
wait_until 60 agree 3 sw1 sw2 sw3 || { for n in sw1 sw2 sw3; do sparkc_of "$n" plan; done; fail "no plan of 3"; }
wait_until 30 shapes switch 3 sw1 sw2 sw3 || fail "the maps are not a switch of 3"
for n in sw1 sw2 sw3; do
        mkdir -p "$TEST_TMP/$n.sparkrun"
        out=$(sparkc_of "$n" export sparkrun --name lab --default --output "$TEST_TMP/$n.sparkrun") ||
                fail "export sparkrun on $n: $(sparkc_of "$n" export sparkrun --output "$TEST_TMP/$n.sparkrun" 2>&1)"
        assert_eq "$out" "$TEST_TMP/$n.sparkrun/lab.yaml
$TEST_TMP/$n.sparkrun/.default" "the paths $n wrote"
        assert_eq "$(cat "$TEST_TMP/$n.sparkrun/.default")" lab "$n's default cluster"
        cmp "$TEST_TMP/sw1.sparkrun/lab.yaml" "$TEST_TMP/$n.sparkrun/lab.yaml" || fail "$n's cluster file differs from sw1's"
done
cat "$TEST_TMP/sw1.sparkrun/lab.yaml"
python3 -c '
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert d["hosts"] == ["192.168.177.11", "192.168.177.12", "192.168.177.13"], d
assert d["name"] == "lab" and d["transfer_interface"] == "cx7", d
print("yaml.safe_load:", d)' "$TEST_TMP/sw1.sparkrun/lab.yaml" || fail "the cluster file as YAML"
cp "$TEST_TMP/sw1.sparkrun/lab.yaml" "$TEST_TMP/first.yaml"
sparkc_of sw2 export sparkrun --name lab --output "$TEST_TMP/sw1.sparkrun" >/dev/null
cmp "$TEST_TMP/first.yaml" "$TEST_TMP/sw1.sparkrun/lab.yaml" || fail "a second export changed the bytes"

step "each node's .env: the same nodes, its own LOCAL_IP; the gate passes both files"
for i in 1 2 3; do
        n=sw$i
        sparkc_of "$n" export svd --output "$TEST_TMP/$n.env" >/dev/null || fail "export svd on $n: $(sparkc_of "$n" export svd 2>&1)"
        (
                set -a
                . "$TEST_TMP/$n.env"
                [ "$CLUSTER_NODES" = 192.168.177.11,192.168.177.12,192.168.177.13 ] || exit 1
                [ "$LOCAL_IP" = "192.168.177.1$i" ] && [ "$ETH_IF" = enp1s0f1np1 ] && [ -n "$IB_IF" ]
        ) || fail "$n's .env: $(cat "$TEST_TMP/$n.env")"
        sparkc_of "$n" env --check --for svd "$TEST_TMP/$n.env" || fail "the gate fails $n's own .env"
        sparkc_of "$n" env --check --for sparkrun "$TEST_TMP/first.yaml" || fail "the gate fails $n's cluster file"
done
cat "$TEST_TMP/sw2.env"

step "another node's .env copied: exit 2, naming the node it came from"
set +e
out=$(sparkc_of sw2 env --check --for svd "$TEST_TMP/sw3.env")
rc=$?
set -e
echo "$out"
assert_eq "$rc" 2 "the gate's exit on sw3's .env on sw2"
assert_contains "$out" "this .env is sw3's, copied to this node" "the gate names the copy"

step "a fourth node joins: the old files give exit 2, naming it"
start_node 4
wait_until 60 agree 4 sw1 sw2 sw3 sw4 || fail "no plan of 4"
wait_until 30 shapes switch 4 sw1 sw2 sw3 sw4 || fail "the maps are not a switch of 4"
for kind in "sparkrun $TEST_TMP/first.yaml" "svd $TEST_TMP/sw1.env"; do
        set +e
        # shellcheck disable=SC2086
        out=$(sparkc_of sw1 env --check --for $kind)
        rc=$?
        set -e
        echo "$out"
        assert_eq "$rc" 2 "the gate's exit on the stale ${kind%% *} file"
        assert_contains "$out" "lacks 192.168.177.14, the plan's rank 3 (sw4): a node joined the plan" "the new node named"
done
sparkc_of sw1 export sparkrun --name lab --output "$TEST_TMP/sw1.sparkrun" >/dev/null
sparkc_of sw1 env --check --for sparkrun "$TEST_TMP/sw1.sparkrun/lab.yaml" || fail "the gate fails the file just written"
pass
