#!/usr/bin/env bash
# What a careless administrator or a hostile local user can put where sparkd reads: requests
# json-c would read differently from what they say, and FIFOs or devices where the key, the
# config or a state file should be. Each is refused with the path and the reason; the daemon
# never blocks and goes on serving.
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"

ns=$(netns_new a)
"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
peer_conf a lo 127.0.0.2
sparkd_start a "$ns" -c "$TEST_TMP/a.conf"

step "repeated keys, escaped NUL, ids that cannot be echoed: refused"
python3 "$TESTS_DIR/hostile_json.py" "$(sock_of a)" || fail "hostile requests"

step "the cluster key replaced by a FIFO, then reloaded: answered, the reason shown"
mkfifo "$TEST_TMP/fifo.key"
sed -i "s|^key_file = .*|key_file = $TEST_TMP/fifo.key|" "$TEST_TMP/a.conf"
rc=0
out=$(timeout 10 "$SPARKC" --socket "$(sock_of a)" reload 2>&1) || rc=$?
[ "$rc" != 124 ] || fail "reload with a FIFO as key_file did not answer within 10 s"
json=$(timeout 10 "$SPARKC" --socket "$(sock_of a)" --json peers) || fail "peers after the reload: no answer"
assert_eq "$(json_get "$json" 'd["peering"]')" False "peering with a FIFO as the key"
grep -q "peering is off: $TEST_TMP/fifo.key is a FIFO, not a regular file" "$(log_of a)" ||
        fail "the log does not say the key is a FIFO"

step "state files replaced by FIFOs: the daemon starts, sets them aside, serves"
sparkd_stop a
for f in node-id history.json links.json; do
        rm -f "$TEST_TMP/a.state/$f"
        mkfifo "$TEST_TMP/a.state/$f"
done
sed -i "s|^key_file = .*|key_file = $TEST_TMP/cluster.key|" "$TEST_TMP/a.conf"
sparkd_start a "$ns" -c "$TEST_TMP/a.conf"
for f in node-id history.json links.json; do
        [ -p "$TEST_TMP/a.state/$f.corrupt" ] || fail "$f (a FIFO) was not set aside as $f.corrupt"
done
[ -f "$TEST_TMP/a.state/node-id" ] || fail "no new node-id written"
sparkd_stop a

step "--socket naming a file, a directory or a symlink: refused, nothing removed"
echo "someone's data" >"$TEST_TMP/data"
mkdir "$TEST_TMP/dir"
ln -s "$TEST_TMP/data" "$TEST_TMP/link"
for path in "$TEST_TMP/data" "$TEST_TMP/dir" "$TEST_TMP/link"; do
        rc=0
        out=$(timeout 10 ip netns exec "$ns" "$SPARKD" --foreground --log-target=stderr -c "$TEST_TMP/a.conf" \
                --socket "$path" --state-dir "$TEST_TMP/a.state" 2>&1) || rc=$?
        assert_eq "$rc" 1 "exit status with --socket $path"
        assert_contains "$out" "$path exists and is not a socket" "sparkd --socket $path"
done
[ "$(cat "$TEST_TMP/data")" = "someone's data" ] && [ -d "$TEST_TMP/dir" ] && [ -L "$TEST_TMP/link" ] ||
        fail "a refused --socket path was changed"

step "the socket path replaced by a file while running: the file survives the stop"
sparkd_start a "$ns" -c "$TEST_TMP/a.conf"
rm "$(sock_of a)"
echo "not a socket" >"$(sock_of a)"
kill -TERM "$(pid_of a)"
wait "$(pid_of a)" || fail "sparkd exited with status $? after SIGTERM"
[ "$(cat "$(sock_of a)")" = "not a socket" ] || fail "the stop removed a file it had not made"
pass
