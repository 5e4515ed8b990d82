#!/usr/bin/env bash
# The job plan is a function of the cluster, not of a node's neighbourhood:
# - a ring of four Sparks (spark1..spark4, fixture hosts, p0 of each cabled to p1 of the next,
#   each cable its own /24), each also on a management LAN (a bridge, eth0 192.168.1.N with the
#   default route): every node prints the same digest, head spark1, ranks 0..3 once each,
#   NNODES=4, the rendezvous on the management network (opposite nodes share no fabric subnet);
# - spark3 stopped: within 15 s the three others drop it with one new shared digest and name it
#   with why;
# - eight on a switch (a bridge, one /24) with [cluster] head = spark6: every node the same
#   digest, head spark6 at its fabric address, ranks 0..7 once each, NNODES=8.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
declare -A NS

# fixture_host NAME ADDRESS: a copy of the spark-twins host for NAME, the RoCE v2 GIDs of its
# active port (rocep1s0f1, under enp1s0f1np1) made ADDRESS's, as the kernel would.
fixture_host() {
        local gid
        cp -a "$TESTS_DIR/../fixtures/hosts/spark-twins" "$TEST_TMP/host-$1"
        IFS=. read -r o1 o2 o3 o4 <<<"$2"
        for gid in "$TEST_TMP/host-$1"/sys/devices/pci0000:00/0000:00:00.0/0000:01:00.1/infiniband/rocep1s0f1/ports/1/gids/[23]; do
                printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$o1" "$o2" "$o3" "$o4" >"$gid"
        done
}

# plan_of NAME PYEXPR: PYEXPR over NAME's plan `d`.
plan_of() { json_get "$(sparkc_of "$1" --json plan 2>/dev/null)" "$2"; }

# torchrun_of NAME: "MASTER_ADDR:MASTER_PORT NODE_RANK NNODES DIGEST" from NAME's env --for torchrun.
torchrun_of() {
        (
                out=$(sparkc_of "$1" env --for torchrun 2>/dev/null) || exit 1
                eval "$out"
                digest=$(sed -n 's/^# sparkd: job plan \([0-9a-f]*\):.*/\1/p' <<<"$out")
                echo "$MASTER_ADDR:$MASTER_PORT $NODE_RANK $NNODES $digest"
        )
}

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

# check_ranks HEAD ADDR SIZE NODE...: env --for torchrun on each NODE gives one rendezvous
# HEAD's ADDR, NNODES=SIZE, ranks 0..SIZE-1 once each and the plan's digest; the head's rank 0.
check_ranks() {
        local head=$1 addr=$2 size=$3 n out endpoint rank nnodes digest ranks="" first=""
        shift 3
        for n in "$@"; do
                out=$(torchrun_of "$n") || fail "env --for torchrun on $n: $(sparkc_of "$n" env --for torchrun 2>&1 >/dev/null)"
                echo "$n: $out"
                read -r endpoint rank nnodes digest <<<"$out"
                assert_eq "$endpoint" "$addr:29500" "$n's rendezvous"
                assert_eq "$nnodes" "$size" "$n's NNODES"
                [ -n "$first" ] || first=$digest
                assert_eq "$digest" "$first" "$n's digest"
                [ "$n" != "$head" ] || assert_eq "$rank" 0 "the head's rank"
                ranks="$ranks$rank "
        done
        assert_eq "$(tr ' ' '\n' <<<"$ranks" | grep . | sort -n | tr '\n' ' ')" "$(seq -s ' ' 0 $((size - 1))) " "ranks"
}

step "a ring of four, a management LAN beside it"
mgmt=$(netns_new mgmt)
ip -n "$mgmt" link add br0 type bridge
ip -n "$mgmt" link set br0 up
for i in 1 2 3 4; do
        NS[spark$i]=$(netns_new "spark$i")
        ip link add eth0 netns "${NS[spark$i]}" type veth peer name "m$i" netns "$mgmt"
        ip -n "$mgmt" link set "m$i" master br0 up
        ip -n "${NS[spark$i]}" addr add "192.168.1.$i/24" dev eth0
        ip -n "${NS[spark$i]}" link set eth0 up
        ip -n "${NS[spark$i]}" route add default via 192.168.1.254
        fixture_host "spark$i" "10.10.$(((i + 2) % 4 + 1)).2"
done
# Cable i: spark<i>'s port 0 (10.10.i.1) to spark<i+1>'s port 1 (10.10.i.2).
for i in 1 2 3 4; do
        j=$((i % 4 + 1))
        veth_pair "${NS[spark$i]}" enp1s0f0np0 "${NS[spark$j]}" enp1s0f1np1 "10.10.$i.1/24" "10.10.$i.2/24"
done
for i in 1 2 3 4; do
        j=$((i % 4 + 1)); h=$(((i + 2) % 4 + 1))
        peer_conf "spark$i" "enp1s0f0np0 enp1s0f1np1" "10.10.$i.2 10.10.$h.1" "[daemon]" "host_root = $TEST_TMP/host-spark$i"
        sparkd_start "spark$i" "${NS[spark$i]}" -c "$TEST_TMP/spark$i.conf"
done
wait_until 30 agree 4 spark1 spark2 spark3 spark4 || {
        for n in spark1 spark2 spark3 spark4; do sparkc_of "$n" plan; done
        fail "the four nodes do not agree on a plan of 4"
}
for n in spark1 spark2 spark3 spark4; do sparkc_of "$n" plan | head -3; done
assert_eq "$(plan_of spark3 'd["plane"]')" management "the ring's plane"
assert_contains "$(plan_of spark3 'd["plane_why"]')" "share no fabric subnet" "why the management network"
check_ranks spark1 192.168.1.1 4 spark1 spark2 spark3 spark4
out=$(sparkc_of spark2 env --for torchrun 2>/dev/null)
assert_contains "$out" "export NCCL_SOCKET_IFNAME='=eth0'" "NCCL's bootstrap on the management netdev"
assert_contains "$out" "export GLOO_SOCKET_IFNAME='eth0'" "Gloo on the management netdev"
assert_contains "$out" "NCCL_IB_HCA=" "the data on the fabric"
# Plain env too: the plan's digest and plane in a comment, the bootstrap on the management netdev;
# and env --check takes that environment as this node's own.
out=$(sparkc_of spark2 env)
assert_contains "$out" "# sparkd: job plan $(plan_of spark2 'd["digest"]'): 4 nodes, head spark1; rendezvous on the management network" "env's comment"
assert_contains "$out" "export NCCL_SOCKET_IFNAME='=eth0'" "env's bootstrap"
rc=0
ip netns exec "${NS[spark2]}" env -i PATH="$PATH" sh -c "ulimit -l unlimited 2>/dev/null; $out
        $SPARKC --socket $(sock_of spark2) env --check" >"$TEST_TMP/check.out" 2>&1 || rc=$?
cat "$TEST_TMP/check.out"
assert_not_contains "$(cat "$TEST_TMP/check.out")" "SOCKET_IFNAME" "env --check on env's own variables"
assert_not_contains "$(cat "$TEST_TMP/check.out")" "MASTER_ADDR" "env --check on env's own variables"
before=$(plan_of spark1 'd["digest"]')

step "spark3 stopped: the others drop it within 15 s, with one new digest, and name it"
sparkd_stop spark3
t0=$SECONDS
dropped() { agree 3 spark1 spark2 spark4 && [ "$(plan_of spark1 'd["digest"]')" != "$before" ]; }
wait_until 15 dropped || fail "the three others do not agree on a plan of 3"
echo "dropped after $((SECONDS - t0)) s"
[ $((SECONDS - t0)) -le 15 ] || fail "the three others took $((SECONDS - t0)) s to agree on a plan of 3"
for n in spark1 spark2 spark4; do
        err=$(sparkc_of "$n" hostfile 2>&1 >/dev/null)
        assert_contains "$err" "left out spark3" "$n's hostfile names spark3"
        assert_contains "$(plan_of "$n" '[l["reason"] for l in d["left_out"] if l["name"] == "spark3"][0]')" \
                "its summary is stale" "$n's reason"
done
check_ranks spark1 192.168.1.1 3 spark1 spark2 spark4
for i in 1 2 4; do sparkd_stop "spark$i"; done

step "eight on a switch, [cluster] head = spark6"
sw=$(netns_new sw)
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
for i in 1 2 3 4 5 6 7 8; do
        n=sw$i
        NS[$n]=$(netns_new "$n")
        ip link add enp1s0f1np1 netns "${NS[$n]}" type veth peer name "p$i" netns "$sw"
        ip -n "$sw" link set "p$i" mtu 9000 master br0 up
        ip -n "${NS[$n]}" addr add "192.168.177.$((10 + i))/24" dev enp1s0f1np1
        ip -n "${NS[$n]}" link set enp1s0f1np1 up
done
for i in 1 2 3 4 5 6 7 8; do
        static=""
        for k in 1 2 3 4 5 6 7 8; do [ "$k" = "$i" ] || static="$static 192.168.177.$((10 + k))"; done
        fixture_host "sw$i" "192.168.177.$((10 + i))"
        peer_conf "spark$i" enp1s0f1np1 "$static" "[daemon]" "host_root = $TEST_TMP/host-sw$i" "[cluster]" "head = spark6"
        mv "$TEST_TMP/spark$i.conf" "$TEST_TMP/sw$i.conf"
        sparkd_start "sw$i" "${NS[sw$i]}" -c "$TEST_TMP/sw$i.conf"
done
all8="sw1 sw2 sw3 sw4 sw5 sw6 sw7 sw8"
# shellcheck disable=SC2086
wait_until 60 agree 8 $all8 || { for n in $all8; do sparkc_of "$n" plan | head -4; done; fail "the eight do not agree on a plan of 8"; }
assert_eq "$(plan_of sw2 'd["plane"]')" fabric "the switch's plane"
assert_eq "$(plan_of sw2 'd["head"]["why"]')" "[cluster] head names it" "the head's why"
# shellcheck disable=SC2086
check_ranks sw6 192.168.177.16 8 $all8
pass
