# Helpers of the benchmarks. bench_use_build needs nothing else; the others run after lib.sh and
# lib_peers.sh are sourced.

# bench_use_build DIR: the daemon, client and probe helpers of the build in DIR (made absolute in
# $build), for lib.sh; exits saying what is missing.
bench_use_build() {
        build=$(cd "$1" && pwd)
        export SPARKD_BIN=$build/daemon/sparkd SPARKC_BIN=$build/client/sparkc
        export PROBE_HELPER_DIR=$build/probes
        local f
        for f in "$SPARKD_BIN" "$SPARKC_BIN" "$PROBE_HELPER_DIR/sparkd-probe-tcp"; do
                [ -x "$f" ] || { echo "no $f: build first (ninja -C $build)"; exit 1; }
        done
}

# real_history OUT COUNT: writes to OUT a history.json of COUNT results, real ones repeated: two
# daemons (a and b, stopped again) run a tcp and an rtt probe, and the results a saved are
# copied, each copy with an id of its own. Leaves the test's cluster key in place.
real_history() {
        local out=$1 count=$2
        echo "real results: a tcp and an rtt probe between two daemons"
        two_probe_nodes "duration = 1" "streams = 2"
        sparkc_of a probe --peer b --kind tcp >/dev/null || fail "tcp probe a->b failed"
        sparkc_of a probe --peer b --kind rtt >/dev/null || fail "rtt probe a->b failed"
        wait_until 10 python3 -c 'import json,sys; assert len(json.load(open(sys.argv[1]))["results"]) >= 2' \
                "$TEST_TMP/a.state/history.json" || fail "a never saved its two results"
        sparkd_stop a
        sparkd_stop b
        ip netns del "$a"
        ip netns del "$b"
        python3 - "$TEST_TMP/a.state/history.json" "$out" "$count" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
real = d["results"]
results = []
for i in range(int(sys.argv[3])):
    r = dict(real[i % len(real)])
    r["id"] = "%s-%04d" % (r.get("id", "bench"), i)
    results.append(r)
d["results"] = results
# Written as sparkd writes it (json-c: compact, every "/" escaped), so each daemon reads it as its
# own file rather than as another writer's, which it would save again at start.
open(sys.argv[2], "w").write(json.dumps(d, separators=(",", ":")).replace("/", "\\/"))
PY
        echo "history.json of $count results: $(stat -c %s "$out") bytes"
}
