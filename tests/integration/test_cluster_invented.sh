#!/usr/bin/env bash
# A keyed peer of node a invents 300 nodes with 50 KB sections. Nodes only their relay speaks of
# take at most 64 places of the view on a (and on b, which hears them through a); the view's
# answer stays within what sparkc reads, and a real node that joins afterwards is taken everywhere.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
sw=$(netns_new sw)
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
declare -A NS ADDR=([a]=10.98.0.1 [b]=10.98.0.2 [c]=10.98.0.3 [r]=10.98.0.66)
for node in a b c r; do
        NS[$node]=$(netns_new "$node")
        ip link add f$node netns "${NS[$node]}" type veth peer name "p$node" netns "$sw"
        ip -n "$sw" link set "p$node" master br0 up
        ip -n "${NS[$node]}" addr add "${ADDR[$node]}/24" dev f$node
        ip -n "${NS[$node]}" link set f$node up
done
for node in a b c; do
        static=""
        for other in a b c; do [ "$other" = "$node" ] || static="$static ${ADDR[$other]}"; done
        # A loaded machine must not take peers down: 50 KB summaries by the hundred go by.
        peer_conf $node f$node "$static" "[peers]" "timeout = 5s"
done
sparkd_start a "${NS[a]}" -c "$TEST_TMP/a.conf"
sparkd_start b "${NS[b]}" -c "$TEST_TMP/b.conf"
wait_pairs up 10 "a b" "b a"
# view_get NODE PYEXPR: evaluates PYEXPR over NODE's `sparkc --json cluster` as `d` (megabytes:
# read from a file, not passed as an argument).
view_get() {
        sparkc_of "$1" --json cluster >"$TEST_TMP/view.json" || return 1
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$TEST_TMP/view.json" "$2"
}

knows_both() { [ "$(view_get "$1" 'sorted(n["name"] for n in d["nodes"])')" = "['a', 'b']" ]; }
for n in a b; do wait_until 10 knows_both $n || fail "$n's view: $(view_get $n '[n["name"] for n in d["nodes"]]')"; done

step "a keyed peer of a invents 300 nodes with 50 KB sections"
# Each invented node has a key of its own, so its summaries verify, and an NCCL 2.27.7 in a build
# of its own: counted, two of them would fail every doctor's consistency check.
ip netns exec "${NS[r]}" python3 "$TESTS_DIR/peer_rogue.py" "${ADDR[a]}" 7471 "$TEST_TMP/cluster.key" \
        "$TEST_TMP/rogue.nodekey" evil 120 300 50000 2.27.7 >"$TEST_TMP/rogue.out" 2>&1 &
rogue=$!
refused() { grep -q "cluster: refused a summary from peer evil" "$(log_of a)"; }
wait_until 30 refused || fail "a refused none of the invented nodes"
echo "    $(grep -m1 "cluster: refused a summary from peer evil" "$(log_of a)")"
assert_contains "$(grep -m1 "cluster: refused a summary from peer evil" "$(log_of a)")" "(at most 64 a peer)" "the refusal names the limit"
# The rest of the invented nodes arrive (and are refused) while the view is read.
for n in a b; do
        rc=0
        sparkc_of $n --json cluster >"$TEST_TMP/view.json" 2>"$TEST_TMP/err" || rc=$?
        echo "    $n: sparkc cluster exit $rc, $(wc -c <"$TEST_TMP/view.json") bytes, $(cat "$TEST_TMP/err")"
        assert_eq "$rc" 0 "exit status of $n's sparkc cluster"
        ghosts=$(view_get $n 'sum(n["name"].startswith("ghost-") for n in d["nodes"])')
        echo "    $n holds $ghosts invented nodes of $(view_get $n 'len(d["nodes"])')"
        assert_eq "$((ghosts <= 64))" 1 "invented nodes held on $n"
        echo "    $n: real nodes $(view_get $n "[(n[\"name\"], n[\"confirmed\"]) for n in d[\"nodes\"] if not n[\"name\"].startswith(\"ghost-\")]")"
        assert_eq "$(view_get $n '[n["confirmed"] for n in d["nodes"] if n["name"] in ("a", "b")]')" "[True, True]" "$n's real nodes are confirmed"
        assert_eq "$(view_get $n 'any(n["confirmed"] for n in d["nodes"] if n["name"].startswith("ghost-"))')" False "no invented node is confirmed on $n"
        # Unconfirmed, they weigh on no verdict: no NCCL build of theirs in the consistency check.
        doctor=$(sparkc_of $n doctor 2>&1 || true)
        echo "    $n's doctor: $(grep -i "consistency" <<<"$doctor" | head -2)"
        assert_not_contains "$doctor" "NCCL version in different builds" "$n's doctor counts invented nodes"
done

step "a real node that joins now is taken everywhere"
sparkd_start c "${NS[c]}" -c "$TEST_TMP/c.conf"
has_c() { [ "$(view_get "$1" 'any(n["name"] == "c" for n in d["nodes"])')" = True ]; }
for n in a b; do wait_until 15 has_c $n || fail "$n's view does not take c: $(grep "node c\|peer c" "$(log_of $n)" | tail -3)"; done
assert_eq "$(grep -c "past the limit" "$(log_of a)" || true)" 0 "refusals for want of room on a"
kill "$rogue" 2>/dev/null || true
wait "$rogue" 2>/dev/null || true
pass
