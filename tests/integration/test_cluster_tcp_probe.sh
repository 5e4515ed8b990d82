#!/usr/bin/env bash
# A ring of four Sparks on the cluster harness whose probe schedule runs the default tcp probe (a
# single stream) by itself: a veth carries one stream at some 10-20 Gb/s, a fraction of a Spark
# rail's 200G and inside the band where RDMA write bandwidth shows a stale initialization. One
# TCP stream is no such evidence: no result says stale-initialization, no doctor fails, and every
# node stays in every node's hostfile (the job plan, its rendezvous on the management LAN beside
# the ring).
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
step "a ring of four, tcp probes scheduled every 10 s"
cluster_ring 4 t
cluster_management_lan t1 t2 t3 t4
start=$(date +%s%N)
# busy_gbps = 0: a probe on a neighbouring cable would otherwise count as load and defer the next.
cluster_start "[probe]" "helper_dir = $helpers" "kinds = tcp" "interval = 10s" "jitter = 1" "duration = 2" \
        "streams = 1" "busy_gbps = 0"
cluster_wait_map ring 60 t1 t2 t3 t4
echo "the ring mapped after $((($(date +%s%N) - start) / 1000000)) ms"

# scheduled_tcp NODE: NODE's scheduled tcp results as "peer verdict gbps" lines.
scheduled_tcp() {
        json_get "$(sparkc_of "$1" --json history --kind tcp --limit 100)" \
                "'\n'.join('%s %s %s' % (r['peer'], (r.get('diagnosis') or {}).get('verdict'), [(x.get('direction'), x.get('gbps')) for x in (r.get('diagnosis') or {}).get('rails', [])]) for r in d['results'] if r['scheduled'])"
}
# measured_pairs: how many scheduled tcp results with a verdict the nodes have in all.
measured_pairs() {
        local n count=0
        for n in t1 t2 t3 t4; do count=$((count + $(scheduled_tcp $n | awk '$2 != "None"' | wc -l))); done
        echo $count
}
measured_twice() { [ "$(measured_pairs)" -ge 2 ]; }

step "the schedule's tcp probes measure the rails"
cluster_wait 90 measured_twice || fail "fewer than two scheduled tcp results: $(for n in t1 t2 t3 t4; do echo "$n: $(scheduled_tcp $n)"; done)"
echo "$(measured_pairs) scheduled results after $((($(date +%s%N) - start) / 1000000)) ms"
for n in t1 t2 t3 t4; do
        out=$(scheduled_tcp $n)
        echo "$n: $out"
        assert_not_contains "$out" stale-initialization "$n's scheduled tcp verdicts"
        assert_not_contains "$(sparkc_of $n --json history --kind tcp --limit 100)" stale-initialization "$n's history"
done

step "no doctor fails; every node in every hostfile"
# hostfile_has NODE NAME...: NODE's hostfile lists exactly these nodes, and leaves none out for its
# doctor.
hostfile_has() {
        local json
        json=$(sparkc_of "$1" --json hostfile 2>/dev/null) || return 1
        shift
        [ "$(json_get "$json" "(sorted(n['name'] for n in d['nodes']), [l['name'] for l in d['left_out'] if 'doctor' in l['reason']])")" = \
                "($(python3 -c 'import sys; print(sorted(sys.argv[1:]))' "$@"), [])" ]
}
for n in t1 t2 t3 t4; do
        cluster_doctor_passes $n || fail "$n's doctor fails: $(cluster_doctor_failures $n)"
        sparkc_of $n doctor | grep -A2 rail-bandwidth || true
        cluster_wait 20 hostfile_has $n t1 t2 t3 t4 || fail "$n's hostfile: $(sparkc_of $n --json hostfile 2>&1)"
done
pass
