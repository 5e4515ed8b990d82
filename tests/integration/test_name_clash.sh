#!/usr/bin/env bash
# Two node ids with one name: nodes spark-a and spark-b with [cluster] head = spark-b, and a keyed
# peer on their switch that says it is "spark-b" too. Neither is the head by that name on a or on b (no
# rendezvous rather than the wrong one), and both report the clash: `sparkc cluster` names the
# ids, the doctor warns and says [cluster] head names no node.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

# Fixture Sparks (spark-twins copies, as test_jobs.sh has them) whose doctors pass, on one switch
# (a bridge) with the rogue's namespace.
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
sw=$(netns_new sw)
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
declare -A NS ADDR=([a]=192.168.177.11 [b]=192.168.177.12 [r]=192.168.177.66)
for node in a b r; do
        NS[$node]=$(netns_new "$node")
        ip link add enp1s0f1np1 netns "${NS[$node]}" type veth peer name "p$node" netns "$sw"
        ip -n "$sw" link set "p$node" mtu 9000 master br0 up
        ip -n "${NS[$node]}" addr add "${ADDR[$node]}/24" dev enp1s0f1np1
        ip -n "${NS[$node]}" link set enp1s0f1np1 up
done
n=0
for node in a b; do
        n=$((n + 1))
        cp -a "$TESTS_DIR/../fixtures/hosts/spark-twins" "$TEST_TMP/host-$node"
        fixture_nccl_as_sparkd "$TEST_TMP/host-$node"
        for gid in "$TEST_TMP/host-$node"/sys/devices/pci0000:00/0000:00:00.0/0000:01:00.1/infiniband/rocep1s0f1/ports/1/gids/[23]; do
                sed -i "s/c0a8:b10b/c0a8:b10$(printf '%x' $((10 + n)))/" "$gid"
        done
        other=$([ $node = a ] && echo "${ADDR[b]}" || echo "${ADDR[a]}")
        peer_conf "spark-$node" enp1s0f1np1 "$other" "[daemon]" "host_root = $TEST_TMP/host-$node" "[cluster]" "head = spark-b"
        sparkd_start "spark-$node" "${NS[$node]}" -c "$TEST_TMP/spark-$node.conf"
done
wait_pairs up 15 "spark-a spark-b" "spark-b spark-a"
b_id=$(tr -d '\n' <"$TEST_TMP/spark-b.state/node-id")
rogue_key=$TEST_TMP/rogue.nodekey
rogue_id=$(python3 "$TESTS_DIR/peer_keyed.py" id "$rogue_key")

step "before: [cluster] head = spark-b is spark-b"
head_is_b() { [ "$(json_get "$(sparkc_of spark-a --json hostfile)" '(d["head"] or {}).get("node_id")')" = "$b_id" ]; }
wait_until 10 head_is_b || fail "spark-a's head is not spark-b: $(sparkc_of spark-a --json hostfile)"

step "a keyed peer that calls itself spark-b"
ip netns exec "${NS[r]}" python3 "$TESTS_DIR/peer_rogue.py" "${ADDR[a]}" 7471 "$TEST_TMP/cluster.key" "$rogue_key" spark-b 90 \
        >"$TEST_TMP/rogue.out" 2>&1 &
rogue=$!
wait_peer_state spark-a "${ADDR[r]}" up 10 || fail "spark-a does not see the rogue up: $(sparkc_of spark-a peers)"
# Its summary reaches spark-b through spark-a: then both views hold two nodes named spark-b.
two_bs() { [ "$(json_get "$(sparkc_of "$1" --json cluster)" 'sum(n["name"] == "spark-b" for n in d["nodes"])')" = 2 ]; }
for n in spark-a spark-b; do wait_until 10 two_bs $n || fail "$n's view does not hold both nodes named spark-b"; done

# Ids sorted, as the view lists them.
first=$(printf '%s\n' "$b_id" "$rogue_id" | sort | head -1)
second=$(printf '%s\n' "$b_id" "$rogue_id" | sort | tail -1)
# On spark-b the rogue is a node only its relay speaks of: it counts for nothing there, and the
# head stays spark-b; spark-a, whose peer it is, sees the clash.
plan=$(sparkc_of spark-b --json hostfile)
assert_eq "$(json_get "$plan" '(d["head"] or {}).get("node_id")')" "$b_id" "spark-b's head with the rogue unconfirmed there"
assert_eq "$(json_get "$(sparkc_of spark-b --json cluster)" '[n["confirmed"] for n in d["nodes"] if n["node_id"] == "'"$rogue_id"'"]')" "[False]" "the rogue on spark-b"
for n in spark-a; do
        plan=$(sparkc_of $n --json hostfile)
        echo "    $n's plan: head $(json_get "$plan" 'd["head"]'), error: $(json_get "$plan" 'd["error"]')"
        assert_eq "$(json_get "$plan" 'd["head"]')" None "$n's head"
        assert_contains "$(json_get "$plan" 'd["error"]')" "[cluster] head is spark-b, which names more than one node of the cluster" "$n's plan"
        rc=0
        env_out=$(sparkc_of $n env --for torchrun 2>&1) || rc=$?
        assert_not_contains "$env_out" "${ADDR[r]}" "$n's env --for torchrun"
        echo "    $n's env --for torchrun: exit $rc, $(head -c 300 <<<"$env_out")"

        cluster=$(sparkc_of $n --json cluster) || fail "$n's sparkc cluster --json: $cluster"
        assert_eq "$(json_get "$cluster" 'd["name_clashes"]')" "[{'name': 'spark-b', 'node_ids': ['$first', '$second']}]" "$n's name clashes"
        text=$(sparkc_of $n cluster) || fail "$n's sparkc cluster: $text"
        assert_contains "$text" "spark-b: $first $second" "$n's sparkc cluster"

        rc=0
        doctor=$(sparkc_of $n --json doctor) || rc=$?
        [ "$rc" -le 1 ] || fail "$n's doctor: exit $rc: $doctor"
        check=$(json_get "$doctor" 'next(c for c in d["checks"] if c["id"] == "names")')
        echo "    $n's doctor: $check"
        assert_contains "$check" "'status': 'warn'" "$n's names check"
        assert_contains "$check" "[cluster] head is spark-b, a name more than one node id carries" "$n's names check"
        assert_contains "$check" "2 nodes are named spark-b: node ids $first, $second" "$n's evidence"
done

kill "$rogue" 2>/dev/null || true
wait "$rogue" 2>/dev/null || true
pass
