#!/usr/bin/env bash
# The shipped alert rules and dashboard against a live Prometheus: two daemons write their
# textfiles, each node's node_exporter (textfile collector, the file linked into its directory as
# the README says) serves it, and Prometheus scrapes both every second with the rules loaded.
# Every alert rule loads healthy, a peer that stops raises a pending alert, and every panel query
# of the dashboard returns series through the HTTP API (b's last textfile stays served).
# Prometheus and the node_exporters listen on the loopback of a namespace of their own.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

for tool in prometheus promtool prometheus-node-exporter; do
        command -v $tool >/dev/null || skip "needs $tool (Debian: prometheus, prometheus-node-exporter)"
done
python3 -c 'import yaml' 2>/dev/null || skip "needs python3-yaml"
contrib=$(cd "$TESTS_DIR/../../contrib" && pwd)
rules=$contrib/prometheus/sparkd.rules.yml
dashboard=$contrib/grafana/sparkd-cluster.json
helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}

step "two daemons writing their textfiles"
cable_nodes
for n in a b; do
        mkdir -p "$TEST_TMP/$n.run" "$TEST_TMP/$n.collector"
        printf '[probe]\nhelper_dir = %s\n[metrics]\ntextfile = %s\n' "$helpers" "$TEST_TMP/$n.run/metrics.prom" \
                >>"$TEST_TMP/$n.conf"
        ln -s "$TEST_TMP/$n.run/metrics.prom" "$TEST_TMP/$n.collector/sparkd.prom"
done
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
wait_pairs up 10 "a b" "b a"
out=$(sparkc_of a --json probe --peer b --kind rtt) || fail "rtt probe failed: $out"
rc=0
out=$(sparkc_of a --json probe --peer b --kind tcp --duration 1 --streams 2) || rc=$?
[ "$rc" -le 1 ] || fail "tcp probe failed: $out"
# A reload writes the textfile at once, with the peers up and the results in.
for n in a b; do
        sparkc_of $n reload >/dev/null || fail "reload of $n"
        grep -q '^sparkd_peer_up{peer=".*"} 1' "$TEST_TMP/$n.run/metrics.prom" ||
                fail "textfile of $n without its peer up: $(cat "$TEST_TMP/$n.run/metrics.prom")"
        # Whatever this host's RDMA devices make of it, the doctor's checks are there.
        grep -q '^sparkd_doctor_check_status{check="rdma-devices"} [012]$' "$TEST_TMP/$n.run/metrics.prom" ||
                fail "textfile of $n without the doctor's checks: $(cat "$TEST_TMP/$n.run/metrics.prom")"
done

step "node_exporter on each node's textfile, Prometheus scraping both"
m=$(netns_new m)
port=9101
targets=
for n in a b; do
        ip netns exec "$m" prometheus-node-exporter --web.listen-address=127.0.0.1:$port \
                --collector.disable-defaults --collector.textfile --log.level=warn \
                --collector.textfile.directory="$TEST_TMP/$n.collector" >>"$TEST_TMP/exporter-$n.log" 2>&1 &
        DAEMON_PIDS+=("$!")
        targets+="      - targets: ['127.0.0.1:$port']
        labels: { instance: $n }
"
        port=$((port + 1))
done
cat >"$TEST_TMP/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $rules
scrape_configs:
  - job_name: sparkd
    static_configs:
$targets
YML
promtool check config "$TEST_TMP/prometheus.yml" >/dev/null || fail "promtool rejects $TEST_TMP/prometheus.yml"
ip netns exec "$m" prometheus --config.file="$TEST_TMP/prometheus.yml" --storage.tsdb.path="$TEST_TMP/tsdb" \
        --web.listen-address=127.0.0.1:9090 --log.level=warn >>"$TEST_TMP/prometheus.log" 2>&1 &
DAEMON_PIDS+=("$!")
api() { ip netns exec "$m" python3 "$TESTS_DIR/prometheus_api.py" http://127.0.0.1:9090 "$@"; }
api targets-up 2 30 || fail "node_exporters not scraped"

step "every alert rule loaded and healthy"
api rules "$rules" 20 || fail "alert rules not loaded"
for n in a b; do
        api series "sparkd_info{instance=\"$n\",node=\"$n\"}" 20 || fail "no sparkd_info of $n"
        api series "sparkd_peer_up{instance=\"$n\"} == 1" 20 || fail "$n's peer not up in Prometheus"
done
# Both ends report the one session: the dashboard counts the pair once.
pairs=$(python3 -c 'import json, sys
print([t["expr"] for p in json.load(open(sys.argv[1]))["panels"] if p["title"] == "Peer pairs up"
       for t in p["targets"]][0])' "$dashboard")
api series "($pairs) == 1" 20 || fail "the dashboard's Peer pairs up is not 1 for one pair: $pairs"

step "b stops: SparkdPeerDown pending on a (for its 2 minutes)"
sparkd_stop b
wait_peer_state a b down 10 || fail "b not down on a after it stopped"
sparkc_of a reload >/dev/null || fail "reload of a"
api series 'ALERTS{alertname="SparkdPeerDown",alertstate="pending",instance="a",peer="b"}' 20 ||
        fail "SparkdPeerDown not pending for a"

step "every panel query of the dashboard returns series"
api panels "$dashboard" 30 || fail "panel queries without series"
pass
