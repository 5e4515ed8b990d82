#!/usr/bin/env bash
# sparkc export on a ring of four of the cluster harness (Sparks with their real netdevs and
# twins, a management LAN beside the ring): sparkrun's ring is three nodes and launch-cluster.sh
# takes one ETH_IF and IB_IF for every rank, so both exports refuse (exit 1) saying so and write
# nothing, on every node.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

plan_of() { json_get "$(sparkc_of "$1" --json plan 2>/dev/null)" "$2"; }
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

# ring N: a ring of N Sparks with a management LAN, started, its plan agreed and its map a ring.
ring() {
        local n=$1 i nodes=""
        cluster_ring "$n" spark
        mgmt=$(netns_new mgmt)
        ip -n "$mgmt" link add br0 type bridge
        ip -n "$mgmt" link set br0 up
        for ((i = 1; i <= n; i++)); do
                ip link add eth0 netns "${CL_NS[spark$i]}" type veth peer name "m$i" netns "$mgmt"
                ip -n "$mgmt" link set "m$i" master br0 up
                ip -n "${CL_NS[spark$i]}" addr add "192.168.1.$i/24" dev eth0
                ip -n "${CL_NS[spark$i]}" link set eth0 up
                ip -n "${CL_NS[spark$i]}" route add default via 192.168.1.254
                nodes="$nodes spark$i"
        done
        cluster_start
        # shellcheck disable=SC2086
        cluster_wait 60 agree "$n" $nodes || { for i in $nodes; do sparkc_of "$i" plan; done; fail "no plan of $n"; }
        # shellcheck disable=SC2086
        cluster_wait_map ring 60 $nodes
}

step "a ring of four: both exports refused, nothing written"
ring 4
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
