#!/usr/bin/env bash
# status and metrics read the doctor's kept result: a burst of calls runs the doctor about once a
# second (sparkd_doctor_runs_total), not once a call; an event still shows in the health line
# within the keep's limits, and sparkc doctor runs the doctor now.
. "$(dirname "$0")/lib.sh"

a=$(netns_new a)
spark_fixture_start a "$a" "$TEST_TMP/host"

# The exposition as the metrics method gives it (JSON: {text}).
runs() {
        local json
        json=$(sparkc_of a --json metrics) || fail "sparkc metrics failed: $json"
        json_get "$json" "' '.join(l.split()[1] for l in d['text'].splitlines() if l.startswith('sparkd_doctor_runs_total '))"
}

step "400 calls of status and metrics run the doctor about once a second, not once a call"
r0=$(runs)
[ -n "$r0" ] || fail "no sparkd_doctor_runs_total in the metrics: $(sparkc_of a metrics | head -20)"
seconds=$(ip netns exec "$a" python3 - "$(sock_of a)" <<'PY'
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
buf = b""
start = time.monotonic()
for i in range(400):
    method = "status" if i % 2 == 0 else "metrics"
    s.sendall(('{"jsonrpc":"2.0","id":%d,"method":"%s"}\n' % (i, method)).encode())
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit("the daemon closed the connection")
        buf += chunk
    line, buf = buf.split(b"\n", 1)
    if "result" not in json.loads(line):
        sys.exit("%s failed: %r" % (method, line[:200]))
print(int(time.monotonic() - start) + 1)
PY
) || fail "the calls failed"
r1=$(runs)
echo "doctor runs: $r0 before, $r1 after 400 calls in at most $seconds s"
# Once a second while asked, plus the two scrapes that read the counter.
[ $((r1 - r0)) -le $((seconds + 2)) ] || fail "the doctor ran $((r1 - r0)) times for 400 calls in $seconds s"

step "an event shows in the health line"
ip -n "$a" link set enp1s0f1np1 down
wait_until 3 sh -c "'$SPARKC' --socket '$(sock_of a)' --json status | grep -q 'link enp1s0f1np1 went down'" ||
        fail "the health line does not say the link went down: $(sparkc_of a --json status)"

step "sparkc doctor runs the doctor now"
r0=$(runs)
sparkc_of a doctor >/dev/null || true # its exit code is the verdict
sparkc_of a doctor >/dev/null || true
r1=$(runs)
[ $((r1 - r0)) -ge 2 ] || fail "two sparkc doctor calls ran the doctor $((r1 - r0)) times"
pass
