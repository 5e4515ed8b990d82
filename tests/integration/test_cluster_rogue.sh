#!/usr/bin/env bash
# A compromised keyed node can lie about itself and about nothing else, on the cluster harness:
# four Sparks on a switch with a management LAN, and a fifth party on the switch holding the
# cluster key and a node key of its own (zz-rogue: a name that sorts last). It (a) passes back
# to spark1 an altered copy of spark2's summary (a section changed, spark2's signature kept):
# spark1 refuses it, with one log line for ten copies; and (b) invents eight nodes, each with a
# fresh key pair and an NCCL 2.27.7 in a build of its own, kept fresh with alives: every node
# shows them unconfirmed, and the four's doctor, hostfile, env --for torchrun, topology
# --netplan and head are byte for byte what they were without it, but for lines naming the
# rogue itself.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"
python3 -c 'import cryptography' 2>/dev/null || skip "needs python3-cryptography"

step "four Sparks on a switch, a management LAN beside them"
cluster_switch tor1
for i in 1 2 3 4; do
        cluster_node "spark$i"
        cluster_plug "spark$i" 0 tor1
done
cluster_management_lan spark1 spark2 spark3 spark4
cluster_start
FOUR="spark1 spark2 spark3 spark4"
# shellcheck disable=SC2086
cluster_wait 60 cluster_plans_agree 4 $FOUR || fail "the four do not agree on a plan of 4"

# outputs NODE DIR: what a job and an operator read from NODE.
outputs() {
        mkdir -p "$2"
        sparkc_of "$1" doctor >"$2/doctor" 2>&1 || true
        sparkc_of "$1" hostfile >"$2/hostfile" 2>&1 || true
        sparkc_of "$1" env --for torchrun >"$2/env" 2>&1 || true
        sparkc_of "$1" topology --netplan >"$2/netplan" 2>&1 || true
        json_get "$(sparkc_of "$1" --json hostfile)" '(d["head"] or {}).get("name")' >"$2/head"
}
# settled DIR: every node's outputs the same twice running (doctor runs and the views settle).
settled() {
        local n
        for n in $FOUR; do
                outputs "$n" "$1/$n.a"
                outputs "$n" "$1/$n.b"
                diff -r "$1/$n.a" "$1/$n.b" >/dev/null || return 1
        done
}
cluster_wait 60 settled "$TEST_TMP/before" || fail "the four's outputs do not settle"
echo "    head before: $(cat "$TEST_TMP/before/spark1.a/head"); doctor: $(grep -c . "$TEST_TMP/before/spark1.a/doctor") lines"

step "a keyed rogue on the switch alters spark2's summary and invents eight nodes"
rns=$(netns_new rogue)
ip link add rg0 netns "$rns" type veth peer name swp99 netns "${CL_SW_NS[tor1]}"
ip -n "${CL_SW_NS[tor1]}" link set swp99 master br0 up
ip -n "$rns" addr add 10.20.1.66/24 dev rg0
ip -n "$rns" link set rg0 up
rogue_id=$(python3 "$TESTS_DIR/peer_keyed.py" id "$TEST_TMP/rogue.nodekey")
spark2_id=$(tr -d '\n' <"$TEST_TMP/spark2.state/node-id")
ip netns exec "$rns" python3 "$TESTS_DIR/peer_rogue.py" "${CL_SW_ADDR[spark1]}" 7471 "$TEST_TMP/cluster.key" \
        "$TEST_TMP/rogue.nodekey" zz-rogue 120 8 100 2.27.7 "$spark2_id" >"$TEST_TMP/rogue.out" 2>&1 &
rogue=$!
ghosts_on() { [ "$(view_of "$1" 'sum(n["name"].startswith("ghost-") and not n["stale"] for n in d["nodes"])')" = 8 ]; }
view_of() { json_get "$(sparkc_of "$1" --json cluster)" "$2"; }
for n in $FOUR; do
        cluster_wait 30 ghosts_on "$n" || fail "$n does not hold the eight invented nodes: $(view_of "$n" '[x["name"] for x in d["nodes"]]')"
done

step "(a) altered copies of spark2's summary change nothing: spark1 hears spark2 itself"
# spark1 offers spark2's summary to the rogue (whose summary lists no peers), the rogue asks for
# it and sends it back ten times with a section's text changed. A copy of a peer's summary
# through another peer is dropped once its body is read, before its texts or signature are:
# spark2 speaks for itself. (An altered text from a node heard only through relays is refused by
# its digest: unit test test_hostile_summaries_are_refused_and_nothing_of_them_kept.)
sent_all() { grep -q "altered 10" "$TEST_TMP/rogue.out"; }
cluster_wait 20 sent_all || fail "the rogue never had spark2's summary to alter: $(cat "$TEST_TMP/rogue.out")"
for n in $FOUR; do
        assert_not_contains "$(sparkc_of "$n" --json cluster)" "forged-" "$n's view"
done

step "(b) the invented nodes are unconfirmed and count for nothing"
for n in $FOUR; do
        assert_eq "$(view_of "$n" 'sorted(set(x["confirmed"] for x in d["nodes"] if x["name"].startswith("ghost-")))')" "[False]" "the invented nodes on $n"
        echo "    $n: $(sparkc_of "$n" cluster | grep -c ghost-) lines of sparkc cluster name them; (name, stale, confirmed): $(view_of "$n" '[(x["name"], x["stale"], x["confirmed"]) for x in d["nodes"] if not x["name"].startswith("ghost-")]')"
done
# without_rogue NODE FILE: FILE less the lines naming the rogue, and on spark1, whose peer it is,
# the peers check's count of peers up.
without_rogue() {
        grep -v -e zz-rogue -e "$rogue_id" "$2" | { [ "$1" = spark1 ] && grep -v "peers up, authenticated" || cat; }
}
# same_as_before NODE: its outputs now are those before the rogue, but for lines on the rogue.
same_as_before() {
        local f
        rm -rf "$TEST_TMP/after/$1"
        outputs "$1" "$TEST_TMP/after/$1"
        for f in doctor hostfile env netplan head; do
                without_rogue "$1" "$TEST_TMP/before/$1.a/$f" >"$TEST_TMP/want.$1.$f"
                without_rogue "$1" "$TEST_TMP/after/$1/$f" >"$TEST_TMP/got.$1.$f"
                cmp -s "$TEST_TMP/want.$1.$f" "$TEST_TMP/got.$1.$f" || return 1
        done
}
for n in $FOUR; do
        # A loaded machine may see a peer stale for a moment: the outputs are read until they
        # settle, and must then be the same.
        cluster_wait 30 same_as_before "$n" || {
                for f in doctor hostfile env netplan head; do diff "$TEST_TMP/want.$n.$f" "$TEST_TMP/got.$n.$f"; done
                fail "$n's outputs changed with the rogue"
        }
        for f in doctor hostfile env netplan head; do
                assert_not_contains "$(cat "$TEST_TMP/after/$n/$f")" "ghost-" "$n's $f"
        done
        echo "    $n: doctor, hostfile, env --for torchrun, topology --netplan and head as before; lines on the rogue: $(cat "$TEST_TMP/after/$n/"* | grep -c -e zz-rogue -e "$rogue_id" || true)"
done
kill "$rogue" 2>/dev/null || true
wait "$rogue" 2>/dev/null || true
pass
