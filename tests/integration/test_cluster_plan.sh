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
# check_ranks HEAD ADDR SIZE NODE...: one rendezvous at ADDR, NNODES=SIZE, ranks 0..SIZE-1 once
# each, HEAD rank 0, on every NODE's env --for torchrun.
check_ranks() {
        local head=$1 addr=$2 size=$3 n out ranks=""
        shift 3
        for n in "$@"; do
                out=$(sparkc_of "$n" env --for torchrun 2>/dev/null) || fail "env --for torchrun on $n"
                out=$(eval "$out"; echo "$MASTER_ADDR:$MASTER_PORT $NODE_RANK $NNODES")
                echo "$n: $out"
                read -r endpoint rank nnodes <<<"$out"
                assert_eq "$endpoint" "$addr:29500" "$n's rendezvous"
                assert_eq "$nnodes" "$size" "$n's NNODES"
                [ "$n" != "$head" ] || assert_eq "$rank" 0 "the head's rank"
                ranks="$ranks$rank "
        done
        assert_eq "$(tr ' ' '\n' <<<"$ranks" | grep . | sort -n | tr '\n' ' ')" "$(seq -s ' ' 0 $((size - 1))) " "ranks"
}

step "a ring of four Sparks, a management LAN beside it"
cluster_ring 4 spark
mgmt=$(netns_new mgmt)
ip -n "$mgmt" link add br0 type bridge
ip -n "$mgmt" link set br0 up
for i in 1 2 3 4; do
        ip link add eth0 netns "${CL_NS[spark$i]}" type veth peer name "m$i" netns "$mgmt"
        ip -n "$mgmt" link set "m$i" master br0 up
        ip -n "${CL_NS[spark$i]}" addr add "192.168.1.$i/24" dev eth0
        ip -n "${CL_NS[spark$i]}" link set eth0 up
        ip -n "${CL_NS[spark$i]}" route add default via 192.168.1.254
done
cluster_start
RING="spark1 spark2 spark3 spark4"
# shellcheck disable=SC2086
cluster_wait 60 agree 4 $RING || { for n in $RING; do sparkc_of "$n" plan; done; fail "the ring does not agree on a plan of 4"; }
for n in $RING; do sparkc_of "$n" plan | head -1; done
assert_eq "$(plan_of spark4 'd["plane"]')" management "the ring's plane"
# shellcheck disable=SC2086
check_ranks spark1 192.168.1.1 4 $RING
before=$(plan_of spark1 'd["digest"]')

step "spark2 stopped: the others drop it within 15 s with one new digest, and name it"
sparkd_stop spark2
t0=$(date +%s)
dropped() { agree 3 spark1 spark3 spark4 && [ "$(plan_of spark1 'd["digest"]')" != "$before" ]; }
cluster_wait 15 dropped || fail "the three others do not agree on a plan of 3 within 15 s"
echo "dropped after $(($(date +%s) - t0)) s"
for n in spark1 spark3 spark4; do
        assert_contains "$(sparkc_of "$n" hostfile 2>&1 >/dev/null)" "left out spark2" "$n's hostfile names spark2"
done
check_ranks spark1 192.168.1.1 3 spark1 spark3 spark4
pass
