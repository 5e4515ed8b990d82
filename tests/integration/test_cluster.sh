#!/usr/bin/env bash
# Four Sparks in a ring (a-b-c-d-a on the cluster harness, each cable and twin its own subnet): opposite nodes have no connection,
# yet every node shows every node through relayed summaries. A fault on one node (an MTU changed
# under audit mode, a link taken down, a doctor check failing in a fixture host root) shows on
# every other node within 5 s, naming the node and the check, and clears within 5 s once fixed; a
# killed node shows as stale with its age, fresh again once restarted; `sparkc cluster --json` is
# the same on every node apart from ages; a peer holding the key that sends oversized, malformed
# or forged summaries is refused, logged once, and the daemon serves on, while a summary of a
# newer format with fields this sparkd does not know is kept and passed on.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"
. "$(dirname "$0")/lib_lldp.sh"
. "$(dirname "$0")/lib_cluster.sh"

# Sparks on the cluster harness, each node's port 0 to the next one's port 1: b's port 1
# (enp1s0f1np1) faces a, c's port 0 (enp1s0f0np0) faces d; c has 10.10.2.2 on its cable to b.
NODES="a b c d"
for n in $NODES; do cluster_node $n; done
cluster_cable a 0 b 1
cluster_cable b 0 c 1
cluster_cable c 0 d 1
cluster_cable d 0 a 1
BA=enp1s0f1np1
CD=enp1s0f0np0
helpers="helper_dir = ${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}"
CL_EXTRA[a]=$'[probe]\n'"$helpers"
# b runs in audit mode: its ports start at the config's MTU, and a change to one stays.
CL_EXTRA[b]=$'[probe]\n'"$helpers"$'\n[daemon]\nmode = audit'
cluster_start
# d's host root gets a NetworkManager profile for its port 1, which the test breaks and repairs.
profile=$TEST_TMP/d.host/etc/NetworkManager/system-connections/enp1s0f1np1.nmconnection
mkdir -p "$(dirname "$profile")"
cp "$TESTS_DIR/../fixtures/hosts/spark-twins/etc/NetworkManager/system-connections/enp1s0f1np1.nmconnection" "$profile"
a=${CL_NS[a]} b=${CL_NS[b]} c=${CL_NS[c]}

# cluster_holds NODE PYEXPR: PYEXPR over NODE's `sparkc --json cluster` (d) holds.
cluster_holds() {
        local json
        json=$(sparkc_of "$1" --json cluster 2>/dev/null) || return 1
        [ "$(json_get "$json" "$2")" = True ]
}

# everywhere_within SEC WHAT PYEXPR NODE...: PYEXPR holds on every NODE within SEC seconds of
# the call (one deadline for all); prints how long it took.
everywhere_within() {
        local sec=$1 what=$2 expr=$3 start end n
        shift 3
        start=$(date +%s%N)
        end=$((start + sec * 1000000000))
        for n in "$@"; do
                until cluster_holds "$n" "$expr"; do
                        [ "$(date +%s%N)" -lt "$end" ] || fail "$what: not on $n within $sec s: $(sparkc_of "$n" cluster)"
                        sleep 0.1
                done
        done
        echo "    $what on $* after $((($(date +%s%N) - start) / 1000000)) ms"
}

NODE='[n for n in d["nodes"] if n["name"] == "%s"][0]'
node_expr() { printf "$NODE" "$1"; }
checks_of() { echo "[c[\"id\"] for c in $(node_expr "$1")[\"sections\"].get(\"doctor\", {}).get(\"checks\", [])]"; }

step "every node knows all four, fresh, opposite ones through a relay"
wait_pairs up 20 "a b" "a d" "b c" "c d"
everywhere_within 20 "four fresh nodes" \
        'sorted(n["name"] for n in d["nodes"] if not n["stale"] and "doctor" in n["sections"]) == ["a", "b", "c", "d"]' $NODES
# The text and the JSON are two calls, and a check may change between them (a peer's state while
# the ring settles): the text is taken between two JSON calls whose checks agree.
# checks_in: every node's doctor checks in a cluster JSON on stdin, one line.
checks_in() { python3 -c 'import json, sys; print(sorted((n["name"], c["id"], c["status"], c["summary"]) for n in json.load(sys.stdin)["nodes"] for c in n["sections"].get("doctor", {}).get("checks", [])))'; }
for attempt in $(seq 1 20); do
        json=$(sparkc_of a --json cluster)
        out=$(sparkc_of a cluster)
        [ "$(sparkc_of a --json cluster | checks_in)" = "$(checks_in <<<"$json")" ] && break
        [ "$attempt" -lt 20 ] || fail "the checks kept changing: $out"
        sleep 0.2 # polls: the checks of the next pair of calls
done
assert_contains "$out" "a (this)" "a's view"
assert_contains "$out" "c " "a's view of the opposite node"
# A check every node reports alike is said under the first node and referred to under the rest.
python3 - "$out" "$json" <<'PY' || fail "a check repeated under every node: $out"
import json, sys
text, nodes = sys.argv[1], json.loads(sys.argv[2])["nodes"]
seen, repeats = {}, 0
for n in nodes:
    for c in n["sections"].get("doctor", {}).get("checks", []):
        key = (c["id"], c["status"], c["summary"])
        if key in seen:
            repeats += 1
            assert f"{c['id']}: as on {seen[key]}" in text, (key, seen[key])
        else:
            seen[key] = n["name"]
for (cid, status, summary), first in seen.items():
    assert text.count(f"{cid}: {summary}") == 1, (cid, text.count(f"{cid}: {summary}"))
assert repeats > 0, "no check is alike on two nodes: nothing shown"
PY

step "an MTU changed under audit mode on b shows everywhere within 5 s, and clears"
ip -n "$b" link set $BA mtu 1500
everywhere_within 5 "b's MTU drift" \
        "any(x[\"name\"] == \"b\" and x[\"id\"] == \"link-drift\" and \"$BA\" in x[\"summary\"] for x in d[\"alerts\"]) and [l[\"mtu\"] for l in $(node_expr b)[\"sections\"][\"links\"] if l[\"name\"] == \"$BA\"] == [1500]" \
        a c d
out=$(sparkc_of d cluster)
assert_contains "$out" "link $BA drifts from the config" "d's view of b's alert"
ip -n "$b" link set $BA mtu 9000
everywhere_within 5 "b's MTU drift cleared" \
        'not any(x["name"] == "b" and x["id"] == "link-drift" for x in d["alerts"])' a c d

step "a link taken down on c shows everywhere within 5 s, and clears"
ip -n "$c" link set $CD down
everywhere_within 5 "c's link $CD down" \
        "any(x[\"name\"] == \"c\" and x[\"id\"] == \"link-down\" and x[\"subject\"] == \"$CD\" for x in d[\"alerts\"]) and [l[\"oper\"] for l in $(node_expr c)[\"sections\"][\"links\"] if l[\"name\"] == \"$CD\"] == [\"down\"]" \
        a b d
ip -n "$c" link set $CD up
wait_pairs up 20 "c d" "d c"
everywhere_within 5 "c's link $CD back up" \
        "not any(x[\"name\"] == \"c\" and x[\"id\"] == \"link-down\" for x in d[\"alerts\"]) and [l[\"oper\"] for l in $(node_expr c)[\"sections\"][\"links\"] if l[\"name\"] == \"$CD\"] == [\"up\"]" \
        a b d

step "a doctor check failing in d's host root shows everywhere within 5 s, named, and clears"
cluster_holds a "\"mtu-profile\" not in $(checks_of d)" || fail "d's mtu-profile check is not ok at the start: $(sparkc_of a cluster)"
sed -i 's/^mtu=9000$/mtu=1500/' "$profile"
everywhere_within 5 "d's mtu-profile check" "\"mtu-profile\" in $(checks_of d) and $(node_expr d)[\"sections\"][\"doctor\"][\"verdict\"] != \"ok\"" a b c
out=$(sparkc_of b cluster)
assert_contains "$out" "mtu-profile: 1 profile will set a fabric netdev's MTU other than 9000" "b's view of d's check"
# b has no connection to d: the summary's view, which says so.
rc=0; out=$(sparkc_of b doctor --node d 2>&1) || rc=$?
assert_contains "$out" "d: warning (from its summary" "b's doctor --node d"
assert_contains "$out" "mtu-profile: 1 profile will set" "b's doctor --node d"
assert_contains "$out" "the node is not a peer up now" "b's doctor --node d"
assert_eq "$rc" 1 "b's doctor --node d exit status"
# a is d's peer: d's full doctor, the checks that pass too.
rc=0; out=$(sparkc_of a doctor --node d) || rc=$?
assert_contains "$out" "its own doctor, asked over the peer channel" "a's doctor --node d, from d itself"
assert_contains "$out" "[WARN] mtu-profile" "a's doctor --node d"
assert_contains "$out" "[ ok ]" "a's doctor --node d holds the checks that pass too"
assert_eq "$rc" 1 "a's doctor --node d exit status"
rc=0; out=$(sparkc_of a doctor --node nosuch 2>&1) || rc=$?
assert_eq "$rc" 3 "doctor --node of an unknown node"
assert_contains "$out" 'no node named "nosuch" in the cluster view; it knows a, b, c, d' "doctor --node of an unknown node"
sed -i 's/^mtu=1500$/mtu=9000/' "$profile"
everywhere_within 5 "d's mtu-profile check cleared" "\"mtu-profile\" not in $(checks_of d)" a b c

step "a probe's result shows on every node, in the link view and the matrix"
sparkc_of a probe --peer b --kind rtt >/dev/null || fail "rtt probe from a to b: $(sparkc_of a probe --peer b --kind rtt 2>&1)"
everywhere_within 5 "a's rtt to b" \
        '[k["kind"] for l in d["links"] if (l["a"]["name"], l["b"]["name"]) == ("a", "b") for k in l["kinds"] if k["a_to_b"] and k["a_to_b"]["value"] > 0] == ["rtt"]' \
        b c d
# The nodes' results sections only with --results: the link view shows the newest of them.
json=$(sparkc_of c --json cluster)
assert_eq "$(json_get "$json" 'sorted(n["name"] for n in d["nodes"] if "results" in n["sections"])')" "[]" \
        "nodes with a results section in c's --json"
json=$(sparkc_of c --json cluster --results)
assert_eq "$(json_get "$json" "[(r[\"peer\"], r[\"kind\"]) for r in $(node_expr a)[\"sections\"][\"results\"]]")" \
        "[('b', 'rtt')]" "a's results section in c's --json --results"
rc=0; out=$(sparkc_of c cluster --results 2>&1) || rc=$?
assert_eq "$rc" 1 "cluster --results without --json"
assert_contains "$out" "--results adds each node's own results to --json" "cluster --results without --json"
out=$(sparkc_of c cluster)
assert_contains "$out" "a <-> b" "c's link view"
assert_contains "$out" "rtt      a -> b" "c's link view"
out=$(sparkc_of d cluster --matrix rtt)
assert_contains "$out" "rtt rtt_median_us (us), rows from, columns to" "d's rtt matrix"
row=$(grep "^a " <<<"$out")
[[ "$row" =~ ^a\ +x\ +[0-9]+\.[0-9]{2}\ +-\ +-$ ]] || fail "d's matrix row of a: '$row'"
rc=0; out=$(sparkc_of d cluster --watch 2>&1) || rc=$?
assert_eq "$rc" 1 "cluster --watch without a terminal"
assert_contains "$out" "standard output is not a terminal" "cluster --watch without a terminal"
# On a terminal: two screens drawn in place, then Ctrl-C ends it with status 0.
out=$(python3 - "$SPARKC" "$(sock_of d)" <<'PY'
import os, pty, signal, sys
signal.alarm(30)  # a watch that never draws, or never ends, fails the test rather than hanging it
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "--socket", sys.argv[2], "cluster", "--watch"])
seen = b""
while seen.count(b"\033[H\033[2J") < 2:
    chunk = os.read(fd, 65536)
    if not chunk:
        break
    seen += chunk
os.kill(pid, signal.SIGINT)
_, status = os.waitpid(pid, 0)
print("screens=%d exit=%s" % (seen.count(b"\033[H\033[2J"), os.waitstatus_to_exitcode(status)))
print("ALERTS" in seen.decode(errors="replace") and "a (" not in seen.decode(errors="replace"))
PY
)
assert_eq "$out" "screens=2 exit=0
True" "cluster --watch on a terminal"

step "the JSON is the same on every node, ages aside"
everywhere_within 10 "four fresh nodes" 'len(d["nodes"]) == 4 and all(not n["stale"] for n in d["nodes"])' $NODES
same_json() {
        local n first=
        for n in $NODES; do
                sparkc_of $n --json cluster | python3 -c '
import json, sys
d = json.load(sys.stdin)
d.pop("self")
for n in d["nodes"]:
    n.pop("age_s"); n.pop("uptime_s")
print(json.dumps(d, sort_keys=True))' >"$TEST_TMP/cluster.$n.json" || return 1
                [ -z "$first" ] && first=$n && continue
                cmp -s "$TEST_TMP/cluster.$first.json" "$TEST_TMP/cluster.$n.json" || return 1
        done
}
# The summaries settle once every change has gone round the ring.
wait_until 10 same_json || fail "the nodes' JSON differs: $(diff "$TEST_TMP/cluster.a.json" "$TEST_TMP/cluster.c.json")"

step "a killed node shows as stale with its age on every other node; restarted, fresh again"
kill -KILL "$(pid_of a)"
wait "$(pid_of a)" 2>/dev/null || true
everywhere_within 10 "a stale" "$(node_expr a)[\"stale\"] and $(node_expr a)[\"age_s\"] > 0.9" b c d
out=$(sparkc_of c cluster)
assert_contains "$out" "STALE" "c's view of a"
assert_contains "$out" "(stale)" "c's view of what a measured"
row=$(sparkc_of c cluster --matrix rtt | grep "^a ")
[[ "$row" =~ ^a\ +x\ +[0-9]+\.[0-9]{2}~\ +-\ +-$ ]] || fail "c's matrix row of the stale a: '$row'"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
everywhere_within 20 "a fresh again" "not $(node_expr a)[\"stale\"]" b c d

step "a peer sending oversized, malformed and forged summaries is refused, logged once"
victim=$(tr -d '\n' <"$TEST_TMP/c.state/node-id")
# From inside c's namespace, to c's fabric address: the peer port is there only.
ip netns exec "$c" python3 "$TESTS_DIR/peer_hostile_summaries.py" 10.10.2.2 7471 "$TEST_TMP/cluster.key" "$victim" 20 ||
        fail "the hostile peer could not speak to c"
refusals=$(grep -c "cluster: refused a summary from peer hostile" "$(log_of c)")
assert_eq "$refusals" 1 "refusal lines in c's log"
echo "    $(grep "refused a summary from peer hostile" "$(log_of c)")"
assert_contains "$(grep "refused a summary from peer hostile" "$(log_of c)")" "over the limit of 57344 bytes" "the refusal names the limit"
sparkc_of c status >/dev/null || fail "c does not serve after the hostile peer"
json=$(sparkc_of c --json cluster)
assert_eq "$(json_get "$json" 'sorted(n["name"] for n in d["nodes"])')" "['a', 'b', 'c', 'd', 'future']" "c's nodes after the hostile peer"
# The newer sparkd's node, passed on by c: its format and unknown section kept everywhere.
everywhere_within 5 "the newer node's summary" "$(node_expr future)[\"format\"] == 4 and $(node_expr future)[\"sections\"][\"newsection\"] == {\"x\": 1}" a b d
# The forged summaries said "failed" with no checks; c's own names its checks.
assert_eq "$(json_get "$json" "len($(node_expr c)[\"sections\"][\"doctor\"][\"checks\"]) > 0")" True "c's own doctor, not the forged one"
assert_eq "$(json_get "$(sparkc_of b --json cluster)" "len($(node_expr c)[\"sections\"][\"doctor\"][\"checks\"]) > 0")" True "c's doctor as b holds it"

for n in $NODES; do sparkd_stop $n; done
pass
