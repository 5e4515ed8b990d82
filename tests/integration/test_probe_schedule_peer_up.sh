#!/usr/bin/env bash
# A node alone sets no timer for its probe schedule: its rtt rounds pass without a wakeup. When
# a peer comes up, the peer-up hook looks again, and the rounds run with it: node a, alone past
# its first rtt round, starts its own scheduled pathmtu probe to b (every node starts one to each
# peer) once b is up.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

cable_nodes
for n in a b; do
        printf '[probe]\nhelper_dir = %s\nrtt_interval = 2s\n' \
                "${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}" >>"$TEST_TMP/$n.conf"
done
sparkd_start a "$a" -c "$TEST_TMP/a.conf"

step "a is alone past its first rtt round"
uptime_past() { python3 -c 'import json,sys; sys.exit(json.loads(sys.argv[1])["uptime_sec"] < 3)' "$(sparkc_of a --json status)"; }
wait_until 10 uptime_past || fail "a's uptime did not pass 3 s"
scheduled() { json_get "$(sparkc_of a --json history --kind pathmtu)" 'len([r for r in d["results"] if r["scheduled"]])'; }
assert_eq "$(scheduled)" 0 "scheduled pathmtu probes while alone"

step "b comes up: a's schedule runs its round with b"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
wait_peer_state a b up 5 || fail "b not up on a"
for _ in $(seq 100); do [ "$(scheduled)" -ge 1 ] && break; sleep 0.1; done
[ "$(scheduled)" -ge 1 ] || fail "a ran no scheduled pathmtu probe with b: $(sparkc_of a history)"
sparkd_stop a
sparkd_stop b
pass
