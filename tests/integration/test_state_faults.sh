#!/usr/bin/env bash
# State files under stress: sparkd killed with SIGKILL at random moments while it writes its
# probe history and link counters always starts again on an old or a new state, never a damaged
# one; each state file it writes (node-id, history.json with its baselines, links.json) cut
# short or filled with garbage is moved aside with a warning and the daemon starts; a full or
# read-only state directory is logged and the daemon keeps serving. The metrics textfile, also
# rewritten often, is checked whole after every kill too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

: "${PROBE_HELPER_DIR:?PROBE_HELPER_DIR must name the directory of sparkd-probe-*}"
state=$TEST_TMP/a.state
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
veth_pair "$a" ga "$b" gb # flapped from b's side: link counters change all the time
peer_conf a "fa ga" 10.99.0.2 "[probe]" "helper_dir = $PROBE_HELPER_DIR" "history_size = 2000" \
        "[fabric]" "flap_threshold = 1000" "flap_window = 1s" "[metrics]" "textfile = $TEST_TMP/metrics.prom"
peer_conf b fb 10.99.0.1 "[probe]" "helper_dir = $PROBE_HELPER_DIR"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"

# Load on a: rtt probes (each result is saved with the history) and carrier changes on ga.
load_start() {
        # Load, not a wait: while a restarts, the probes fail at once and would spin.
        (while :; do sparkc_of a probe --peer b --kind rtt >/dev/null 2>&1 || sleep 0.1; done) &
        LOAD_PIDS=($!)
        (while :; do
                ip -n "$b" link set gb down
                ip -n "$b" link set gb up
                sleep 0.3 # load, not a wait: a pair of carrier changes a few times a second
        done) >/dev/null 2>&1 &
        LOAD_PIDS+=($!)
}
load_stop() {
        kill "${LOAD_PIDS[@]}" 2>/dev/null || true
        wait "${LOAD_PIDS[@]}" 2>/dev/null || true
}

# state_ok: every state file present is whole and well formed.
state_ok() {
        python3 - "$state" <<'PY'
import json, os, re, sys
d = sys.argv[1]
nid = open(os.path.join(d, "node-id")).read()
assert re.fullmatch(r"[0-9a-f]{32}\n", nid), "node-id: %r" % nid
h = os.path.join(d, "history.json")
if os.path.exists(h):
    j = json.load(open(h))
    assert isinstance(j["results"], list) and isinstance(j["baselines"], dict), "history.json"
# Not state, but written as often: node_exporter must never read half a metrics file.
p = os.path.join(os.path.dirname(d), "metrics.prom")
if os.path.exists(p):
    text = open(p).read()
    assert text.endswith("\n"), "metrics.prom cut short"
    for line in text.splitlines():
        assert line.startswith("#") or re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? \S+", line), line
l = os.path.join(d, "links.json")
if os.path.exists(l):
    j = json.load(open(l))
    assert j["version"] == 1 and isinstance(j["links"], dict), "links.json"
PY
}

step "SIGKILL at random moments during state writes, 15 times"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
wait_peer_state a b up 10 || fail "peers not up"
load_start
wait_until 20 test -s "$state/history.json" || fail "history never saved"
wait_until 20 test -s "$state/links.json" || fail "link counters never saved"
wait_until 20 test -s "$TEST_TMP/metrics.prom" || fail "metrics textfile never written"
id=$(cat "$state/node-id")
n_before=0
for round in $(seq 15); do
        # The kill lands at a random moment of the load: what the test is about, not a wait.
        sleep "$(python3 -c 'import random; print(round(random.uniform(0.2, 1.8), 2))')"
        kill -KILL "$(pid_of a)"
        wait "$(pid_of a)" 2>/dev/null || true
        state_ok || fail "state damaged after SIGKILL in round $round"
        n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["results"]))' "$state/history.json")
        [ "$n" -ge "$n_before" ] || fail "history shrank from $n_before to $n results in round $round"
        n_before=$n
        sparkd_start a "$a" -c "$TEST_TMP/a.conf"
        wait_peer_state a b up 10 || fail "peers not up after restart $round"
done
load_stop
[ "$n_before" -ge 10 ] || fail "only $n_before probe results saved over 15 rounds: the load did not run"
grep -q "event=state-quarantined" "$(log_of a)" && fail "a state file was found damaged after SIGKILL"
assert_eq "$(cat "$state/node-id")" "$id" "node id after 15 kills"
echo "history: $n_before results kept; $(ls -A "$state" | tr '\n' ' ')"
sparkd_stop a

# Baselines are part of history.json: checked there, not as a file of their own.
step "each state file cut short, then filled with garbage: moved aside, daemon starts"
cp -a "$state" "$TEST_TMP/good.state"
for file in node-id history.json links.json; do
        for damage in truncate garbage; do
                rm -rf "$state"
                cp -a "$TEST_TMP/good.state" "$state"
                size=$(stat -c %s "$state/$file")
                case $damage in
                truncate) truncate -s $((size / 2)) "$state/$file" ;;
                garbage) head -c "$size" /dev/urandom >"$state/$file" ;;
                esac
                : >"$(log_of a)"
                sparkd_start a "$a" -c "$TEST_TMP/a.conf"
                [ -f "$state/$file.corrupt" ] || fail "$file ($damage) not moved aside"
                grep -q "event=state-quarantined.*$file\|state file $state/$file is damaged" "$(log_of a)" ||
                        fail "$file ($damage): no warning"
                [ "$(grep -c "is damaged" "$(log_of a)")" = 1 ] || fail "$file ($damage): other files called damaged"
                sparkc_of a status >/dev/null || fail "$file ($damage): not serving"
                sparkd_stop a
                state_ok || fail "$file ($damage): state not rewritten whole"
        done
done

step "a full state directory (a 256 KiB tmpfs): logged, still serving"
mkdir "$TEST_TMP/tiny"
mount -t tmpfs -o size=256k,mode=0755 sparkd-test "$TEST_TMP/tiny" || skip "cannot mount a tmpfs"
CLEANUP_CMDS+=("umount -l '$TEST_TMP/tiny'")
# Filled while no daemon runs: a save in flight would free the file it replaces once the disk
# is full, and the next save would then succeed.
sparkd_start a "$a" -c "$TEST_TMP/a.conf" --state-dir "$TEST_TMP/tiny/state"
wait_peer_state a b up 10 || fail "peers not up on a tiny state directory"
sparkd_stop a
dd if=/dev/zero of="$TEST_TMP/tiny/filler" bs=4k status=none 2>/dev/null || true
[ "$(df --output=avail "$TEST_TMP/tiny" | tail -1)" -eq 0 ] || fail "tmpfs not full"
: >"$(log_of a)"
sparkd_start a "$a" -c "$TEST_TMP/a.conf" --state-dir "$TEST_TMP/tiny/state"
wait_peer_state a b up 10 || fail "peers not up on a full state directory"
load_start
wait_until 20 grep -q "cannot save .*No space left on device" "$(log_of a)" || { load_stop; fail "a full disk not logged"; }
load_stop
# The exit status says whether the result met its baseline (on a loaded machine it may not);
# the probe running and measuring is what counts here.
out=$(sparkc_of a --json probe --peer b --kind rtt) || true
json_get "$out" 'd["measured"]["median_us"] > 0' | grep -q True || fail "probes stop on a full disk: $out"
sparkc_of a status >/dev/null || fail "not serving on a full disk"
json=$(sparkc_of a --json status)
assert_eq "$(json_get "$json" 'd["state_saved"]')" False "state_saved while saves fail"
assert_eq "$(json_get "$json" 'd["state_save_error"]["error"]')" "No space left on device" "the save error"
json_get "$json" 'd["state_save_error"]["file"]' | grep -qE "^$TEST_TMP/tiny/state/(history|links)\.json$" ||
        fail "the file whose save failed: $json"
assert_contains "$(sparkc_of a status)" "(saving fails: $TEST_TMP/tiny/state/" "sparkc status on a full disk"
writes=$(grep -c "cannot save" "$(log_of a)")
echo "full disk: $writes failed saves logged; status: $(sparkc_of a status | grep 'state dir')"
[ "$writes" -le 2 ] || fail "$writes lines for failing saves: each file's failure is told once"
rm -f "$TEST_TMP/tiny/filler"
# With room again, the next probe result and link change save: state_saved comes back.
state_saved() { [ "$(json_get "$(sparkc_of a --json status)" 'd["state_saved"]')" = True ]; }
load_start
wait_until 20 state_saved || { load_stop; fail "state_saved not true again once saves succeed"; }
load_stop
echo "disk freed: $(sparkc_of a status | grep 'state dir')"
grep -q "saved to .* again" "$(log_of a)" || fail "saving again not logged"
sparkd_stop a
state=$TEST_TMP/tiny/state state_ok || fail "state damaged by a full disk"

step "a state directory made read-only while running: logged, still serving"
: >"$(log_of a)"
sparkd_start a "$a" -c "$TEST_TMP/a.conf" --state-dir "$TEST_TMP/tiny/state"
wait_peer_state a b up 10 || fail "peers not up"
mount -o remount,ro "$TEST_TMP/tiny"
load_start
wait_until 20 grep -q "cannot save .*Read-only file system" "$(log_of a)" || { load_stop; fail "read-only not logged"; }
load_stop
sparkc_of a status >/dev/null || fail "not serving on a read-only state directory"
sparkd_stop a

step "starting on a read-only state directory"
: >"$(log_of a)"
sparkd_start a "$a" -c "$TEST_TMP/a.conf" --state-dir "$TEST_TMP/tiny/state"
sparkc_of a status >/dev/null || fail "not serving"
sparkd_stop a
state=$TEST_TMP/tiny/state state_ok || fail "state damaged by a read-only directory"
pass
