#!/usr/bin/env bash
# The stale-initialization signature end to end: node a's host root is a copy of a fixture Spark
# whose rail enp1s0f1np1 says 200G Ethernet and PCIe 32 GT/s x4, and a veth of that name carries
# the tcp probe to b. b's side is rate-limited (tbf on its egress), so only the reverse direction
# (b -> a) is slow: that direction alone is stale-initialization, with one alert for two slow
# results, and a healthy result ends the episode. A veth carries about 13-18 Gb/s here, so the
# NIC's 15 Gb/s cap cannot be told from an unlimited veth, and on a busy 2-core machine an
# unlimited veth can fall to a few Gb/s; the thresholds are scaled well below that (healthy 1.5,
# stale band 0.1-0.8 Gb/s) and the limit is 400 Mbit/s. The doctor then shows the newest
# verdict and the rail's links from the same host root, and fatal AER errors written into it
# between two looks fail it. The band is RDMA's: a tcp figure is evidence only with as many
# streams as [diagnosis] stale_tcp_streams asks (2 here); one stream in the band is degraded, the
# doctor warns and nobody is told to pull the power.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

helpers=${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
root="$TEST_TMP/host"
fixture_host spark-twins "$root"
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" enp1s0f1np1 "$b" fb 192.168.177.11/24 192.168.177.12/24
peer_conf a enp1s0f1np1 192.168.177.12 "[probe]" "helper_dir = $helpers" \
        "[daemon]" "host_root = $root" \
        "[diagnosis]" "healthy_gbps = 1.5" "stale_min_gbps = 0.1" "stale_max_gbps = 0.8" \
        "stale_tcp_streams = 2"
peer_conf b fb 192.168.177.11 "[probe]" "helper_dir = $helpers"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
wait_peer_state a b up 5 || fail "peers not up"
watch_events a

verdict() { json_get "$1" "[r['verdict'] for r in d['diagnosis']['rails'] if r['direction'] == '$2'][0]"; }

step "both directions healthy: ok"
out=$(sparkc_of a --json probe --peer b --kind tcp --duration 1 --streams 2) || fail "healthy probe: $out"
assert_eq "$(json_get "$out" 'd["diagnosis"]["verdict"]')" ok "verdict of an unlimited veth"
assert_eq "$(json_get "$out" 'len(d["measured"]["directions"])')" 2 "directions measured"

step "b -> a limited to 400 Mbit/s, one tcp stream: degraded, no stale verdict, the doctor warns"
tc -n "$b" qdisc add dev fb root tbf rate 400mbit burst 256k latency 20ms
rc=0; out=$(sparkc_of a --json probe --peer b --kind tcp --duration 1 --streams 1) || rc=$?
assert_eq "$rc" 1 "exit status of a degraded result"
assert_eq "$(json_get "$out" 'd["diagnosis"]["verdict"]')" degraded "verdict of one stream"
assert_eq "$(verdict "$out" reverse)" degraded "reverse verdict of one stream"
assert_contains "$(json_get "$out" 'd["diagnosis"]["summary"]')" "a tcp figure of 1 stream cannot show the stale initialization" "why not stale"
json_get "$out" '"recovery" not in d["diagnosis"]' | grep -q True || fail "recovery for one tcp stream: $out"
doc=$(sparkc_of a --json doctor) || true
assert_eq "$(json_get "$doc" "[c['status'] for c in d['checks'] if c['id'] == 'rail-bandwidth'][0]")" warn "rail-bandwidth of one stream"
case "$(sparkc_of a doctor)" in *"AC power"*) fail "the doctor asks to pull the power for one tcp stream" ;; esac
assert_eq "$(count_events a stale-initialization)" 0 "alerts for one tcp stream"

step "two tcp streams (stale_tcp_streams = 2): stale-initialization in the reverse direction only"
rc=0; out=$(sparkc_of a --json probe --peer b --kind tcp --duration 1 --streams 2) || rc=$?
assert_eq "$rc" 1 "exit status of a stale result"
assert_eq "$(json_get "$out" 'd["status"]')" degraded "status"
assert_eq "$(json_get "$out" 'd["diagnosis"]["verdict"]')" stale-initialization "verdict"
assert_eq "$(verdict "$out" forward)" ok "forward verdict"
assert_eq "$(verdict "$out" reverse)" stale-initialization "reverse verdict"
assert_eq "$(json_get "$out" 'd["diagnosis"]["rails"][1]["rail"] + " " + str(d["diagnosis"]["rails"][1]["pcie"])')" \
        "enp1s0f1np1 32 GT/s x4" "the rail and its PCIe link"
json_get "$out" 'len(d["diagnosis"]["recovery"]) == 3' | grep -q True || fail "recovery steps: $out"
table=$(sparkc_of a probe --peer b --kind tcp --duration 1 --streams 2) && rc=0 || rc=$?
echo "$table"
assert_eq "$rc" 1 "exit status of the table"
assert_contains "$table" "verdict: stale-initialization: enp1s0f1np1 reverse:" "verdict line"
assert_contains "$table" "recovery 2: if the rail stays capped: shut both nodes down, remove AC power" "recovery"
wait_events a stale-initialization "" 1 5 || fail "no stale-initialization alert"
assert_eq "$(count_events a stale-initialization)" 1 "alerts for two stale results"
python3 - "$TEST_TMP/a.events" <<'PY' || fail "alert fields"
import json, sys
e = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["event"] == "stale-initialization"][0]
f = e["fields"]
assert f["direction"] == "reverse" and f["rail"] == "enp1s0f1np1" and f["peer"] == "b", f
assert "AC power" in f["recovery"], f
PY

step "the limit gone: ok again, the episode ends, a new cap alerts again"
tc -n "$b" qdisc del dev fb root
out=$(sparkc_of a --json probe --peer b --kind tcp --duration 1 --streams 2) || fail "healthy again: $out"
assert_eq "$(verdict "$out" reverse)" ok "reverse verdict after the limit"
tc -n "$b" qdisc add dev fb root tbf rate 400mbit burst 256k latency 20ms
sparkc_of a --json probe --peer b --kind tcp --duration 1 --streams 2 >/dev/null && fail "a new cap not degraded"
wait_events a stale-initialization "" 2 5 || fail "no alert for the new episode"
assert_eq "$(count_events a stale-initialization)" 2 "alerts after a new episode"
assert_eq "$(json_get "$(sparkc_of a --json history --peer b --kind tcp --limit 1)" 'd["results"][0]["diagnosis"]["verdict"]')" \
        stale-initialization "the verdict in the history"

step "doctor: the rail's links, the newest probe's verdict, then fatal AER errors rising"
out=$(sparkc_of a --json doctor) || true
for id in pcie-link ethernet-speed pcie-aer; do
        assert_eq "$(json_get "$out" "[c['status'] for c in d['checks'] if c['id'] == '$id'][0]")" ok "$id"
done
assert_eq "$(json_get "$out" "[c['status'] for c in d['checks'] if c['id'] == 'rail-bandwidth'][0]")" fail "rail-bandwidth"
text=$(sparkc_of a doctor) || true
assert_contains "$text" "[FAIL] rail-bandwidth  stale-initialization: enp1s0f1np1 reverse:" "doctor's verdict line"
assert_contains "$text" "fix: 1. reboot both nodes" "doctor's recovery"
# node-problem-detector's SparkProbeDegraded rule: NonOK, with the verdict in at most 80 bytes.
rc=0; line=$(sparkc_of a doctor --format npd --check rail-bandwidth) || rc=$?
assert_eq "$rc" 1 "the npd exit status of the probes' rule"
assert_contains "$line" "fail: rail-bandwidth: stale-initialization: enp1s0f1np1 reverse:" "the npd line"
[ "$(printf %s "$line" | wc -c)" -le 80 ] || fail "the npd line is above 80 bytes: $line"
aer="$root/sys/devices/pci0000:00/0000:00:00.0/0000:01:00.1/aer_dev_fatal"
sed -i 's/^TOTAL_ERR_FATAL 0$/TOTAL_ERR_FATAL 2/; s/^DLP 0$/DLP 2/' "$aer"
rc=0; out=$(sparkc_of a doctor) || rc=$?
assert_eq "$rc" 2 "doctor exit status"
assert_contains "$out" "[FAIL] pcie-aer        fatal PCIe AER errors rising on 1 RDMA device" "aer check"
assert_contains "$out" "rocep1s0f1: 2 fatal AER errors since boot, 2 of them since sparkd's first look" "aer evidence"
assert_contains "$out" "fix: escalate" "aer fix"
sparkd_stop a
sparkd_stop b
pass
