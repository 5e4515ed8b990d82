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
