# Peering helpers for integration tests, sourced after lib.sh.

# peer_conf NAME IFACES STATIC [EXTRA...]: writes $TEST_TMP/NAME.conf for a daemon that manages
# IFACES, knows STATIC peers, uses the test's cluster key and quick heartbeats, and leaves the
# host's sysctls alone. Extra lines are appended as they are.
peer_conf() {
        local name=$1 ifaces=$2 static=$3
        shift 3
        {
                printf '[daemon]\nnode_name = %s\n' "$name"
                printf '[fabric]\ninterfaces = %s\n' "$ifaces"
                printf '[peers]\nkey_file = %s\nstatic = %s\nmdns = no\n' "${KEY_FILE:-$TEST_TMP/cluster.key}" "$static"
                printf 'heartbeat_interval = 300ms\ntimeout = 1500ms\n'
                printf '[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n'
                # No probes by themselves unless a test asks (its [probe] lines come later and win),
                # and no memory margin: the free memory of the machine running the tests must not
                # decide them (tests of the memory guard set their own host root and margin).
                printf '[probe]\ninterval = 0\nrtt_interval = 0\nmemory_margin = 0\n'
                for line in "$@"; do printf '%s\n' "$line"; done
        } >"$TEST_TMP/$name.conf"
}

# peer_field NAME PEER PYEXPR: evaluates PYEXPR over the peer entry `p` that NAME's daemon has
# for PEER (matched by name or address); prints None when there is none.
peer_field() {
        local json
        json=$(sparkc_of "$1" --json peers 2>/dev/null) || { echo None; return; }
        python3 -c '
import json, sys
d = json.loads(sys.argv[1]); who = sys.argv[2]
for p in d["peers"]:
    if p.get("name") == who or who in p.get("addresses", []) or p.get("static") == who:
        print(eval(sys.argv[3])); break
else:
    print(None)' "$json" "$2" "$3"
}

# wait_peer_state NAME PEER STATE TIMEOUT_SEC
wait_peer_state() {
        local end=$(($(date +%s%N) + $4 * 1000000000))
        # Bounded by the clock, not by a count of polls: each poll runs sparkc and python.
        while [ "$(date +%s%N)" -lt "$end" ]; do
                [ "$(peer_field "$1" "$2" 'p["state"]')" = "$3" ] && return 0
                sleep 0.1
        done
        [ "$(peer_field "$1" "$2" 'p["state"]')" = "$3" ]
}

# wait_pairs STATE TIMEOUT_SEC "NODE PEER"...: waits until each NODE's daemon shows PEER in STATE
# (each within the timeout); fails naming the first pair that does not get there.
wait_pairs() {
        local state=$1 timeout=$2 pair node peer
        shift 2
        for pair in "$@"; do
                read -r node peer <<<"$pair"
                wait_peer_state "$node" "$peer" "$state" "$timeout" ||
                        fail "$node does not see $peer $state: $(sparkc_of "$node" peers)"
        done
}

# two_nodes [EXTRA...]: nodes a and b on one cable (fa 10.99.0.1, fb 10.99.0.2) with the test's
# cluster key and peer_conf's configs (EXTRA lines are appended to both), both daemons started and
# peered. Sets $a and $b to their namespaces.
two_nodes() {
        local n other
        "$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
        a=$(netns_new a)
        b=$(netns_new b)
        veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
        for n in a b; do
                other=$([ $n = a ] && echo 10.99.0.2 || echo 10.99.0.1)
                peer_conf $n f$n $other "$@"
        done
        sparkd_start a "$a" -c "$TEST_TMP/a.conf"
        sparkd_start b "$b" -c "$TEST_TMP/b.conf"
        wait_peer_state a b up 5 || fail "peers not up"
}

# two_probe_nodes [EXTRA...]: two_nodes with the probe helpers of PROBE_HELPER_DIR and no schedule
# (EXTRA lines come after and may set one).
two_probe_nodes() {
        two_nodes "[probe]" "helper_dir = ${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}" \
                "interval = 0" "rtt_interval = 0" "$@"
}

# cable_nodes: the test's cluster key and nodes a and b on one cable (fa 10.99.0.1, fb
# 10.99.0.2), each with the other in [peers] static; not started. Sets $a and $b.
cable_nodes() {
        "$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
        a=$(netns_new a)
        b=$(netns_new b)
        veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
        peer_conf a fa 10.99.0.2
        peer_conf b fb 10.99.0.1
}

# triangle_nodes [EXTRA...]: the test's cluster key and nodes a, b and c in a triangle, each
# cable its own subnet (a-b 192.168.100.0/24 on ab/ba, b-c .101 on bc/cb, a-c .102 on ac/ca),
# each with both others in [peers] static and EXTRA lines in its config; not started. Sets $a,
# $b and $c.
triangle_nodes() {
        "$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
        a=$(netns_new a)
        b=$(netns_new b)
        c=$(netns_new c)
        veth_pair "$a" ab "$b" ba 192.168.100.1/24 192.168.100.2/24
        veth_pair "$b" bc "$c" cb 192.168.101.2/24 192.168.101.3/24
        veth_pair "$a" ac "$c" ca 192.168.102.1/24 192.168.102.3/24
        peer_conf a "ab ac" "192.168.100.2 192.168.102.3" "$@"
        peer_conf b "ba bc" "192.168.100.1 192.168.101.3" "$@"
        peer_conf c "ca cb" "192.168.102.1 192.168.101.2" "$@"
}

# mdns_cable_nodes [--no-avahi]: (after lib_avahi.sh) the test's cluster key and nodes sparka and
# sparkb on one cable (fa 10.77.0.1, fb 10.77.0.2), each an avahi host (sparkb's without its
# avahi-daemon with --no-avahi), configured to find the other over mDNS only; not started. Sets
# $a and $b.
mdns_cable_nodes() {
        local n
        "$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
        a=$(netns_new a)
        b=$(netns_new b)
        veth_pair "$a" fa "$b" fb 10.77.0.1/24 10.77.0.2/24
        avahi_host "$a" sparka
        avahi_host "$b" sparkb "$@"
        for n in a b; do
                peer_conf "spark$n" "f$n" ""
                sed -i 's/^mdns = no$/mdns = yes/' "$TEST_TMP/spark$n.conf"
        done
}

# clone_node_id FROM TO: puts a copy of FROM's node-key and node-id in TO's state directory, as a
# cloned disk image has them; prints the id.
clone_node_id() {
        mkdir -p "$TEST_TMP/$2.state"
        cp -p "$TEST_TMP/$1.state/node-key" "$TEST_TMP/$2.state/node-key"
        cp "$TEST_TMP/$1.state/node-id" "$TEST_TMP/$2.state/node-id"
        tr -d '\n' <"$TEST_TMP/$1.state/node-id"
}

# start_cable_nodes: starts cable_nodes' daemons a and b (with their configs as the test left
# them) and waits until each sees the other up.
start_cable_nodes() {
        sparkd_start a "$a" -c "$TEST_TMP/a.conf"
        sparkd_start b "$b" -c "$TEST_TMP/b.conf"
        wait_pairs up 10 "a b" "b a"
}

# doctor_text NAME: NAME's doctor as text, whatever its exit status.
doctor_text() { sparkc_of "$1" doctor || true; }

# doctor_says NAME TEXT: NAME's doctor says TEXT.
doctor_says() { grep -qF -- "$2" <<<"$(doctor_text "$1")"; }
