#!/usr/bin/env bash
# sparkd starts with no config file at all; sparkc prints its status for people and as JSON,
# and says clearly when the daemon cannot be reached.
. "$(dirname "$0")/lib.sh"

ns=$(netns_new a)

step "help and version"
# Each output is read whole before it is searched: grep -q stops at the first match, and a help
# longer than one pipe write would then end the writer by SIGPIPE, which pipefail reports.
grep -q -- "--check-config" <<<"$("$SPARKD" --help)" || fail "sparkd --help lacks --check-config"
grep -q "^sparkd " <<<"$("$SPARKD" --version)" || fail "sparkd --version"
grep -q "watch" <<<"$("$SPARKC" --help)" || fail "sparkc --help lacks watch"
# Each command answers --help itself, with no daemon to ask.
grep -q -- "--peer NAME" <<<"$("$SPARKC" --socket /nonexistent probe --help)" || fail "sparkc probe --help"
grep -q -- "--limit" <<<"$("$SPARKC" --socket /nonexistent history --peer b -h)" || fail "sparkc history -h"
rc=0; "$SPARKD" --no-such-option 2>/dev/null || rc=$?
assert_eq "$rc" 1 "exit status for an unknown option"

step "start with built-in defaults (no config file)"
rc=0; err=$("$SPARKD" -f -c "$TEST_TMP/missing.conf" --socket "$(sock_of x)" 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status for a named config file that is missing"
assert_contains "$err" "$TEST_TMP/missing.conf: cannot read: No such file or directory" "error"
sparkd_start a "$ns"
out=$(sparkc_of a status)
assert_contains "$out" "node        $(hostname -s)" "status"
assert_contains "$out" "mode        enforce" "status"
assert_contains "$out" "socket      $(sock_of a)" "status"

step "--json is valid JSON with the documented fields"
json=$(sparkc_of a --json status)
assert_eq "$(json_get "$json" 'd["api_version"]')" 1 "api_version"
assert_eq "$(json_get "$json" 'd["node"]')" "$(hostname -s)" "node"
assert_eq "$(json_get "$json" 'len(d["node_id"])')" 32 "node_id length"
assert_eq "$(json_get "$json" 'd["mode"]')" enforce "mode"
json_get "$json" 'bool(d["uptime_sec"] >= 0 and d["version"] and d["config_path"])' | grep -q True || fail "status fields"
SPARKD_SOCKET=$(sock_of a) "$SPARKC" --json version | python3 -m json.tool >/dev/null || fail "SPARKD_SOCKET ignored"

step "global options after the command, as git and systemctl take them"
"$SPARKC" fabric --json --socket "$(sock_of a)" | python3 -m json.tool >/dev/null || fail "fabric --json --socket"
"$SPARKC" status --socket="$(sock_of a)" -j --timeout 5 | python3 -m json.tool >/dev/null || fail "status --socket= -j"
json=$("$SPARKC" history --limit 3 --json --socket "$(sock_of a)") || fail "history --limit 3 --json"
assert_eq "$(json_get "$json" 'len(d["results"])')" 0 "history among its own options"
rc=0; err=$("$SPARKC" status --socket "$(sock_of a)" --timeout 0 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of a bad global option after the command"
assert_contains "$err" "--timeout needs whole seconds from 1 to 86400, not '0'" "its message"
# After "--" every word is the command's.
rc=0; err=$("$SPARKC" --socket "$(sock_of a)" fabric -- --json 2>&1) || rc=$?
assert_eq "$rc" 1 "a --json after --"
assert_contains "$err" "fabric takes no arguments" "its message"

step "watch with an unknown event: the events there are and how to ask, not a bare error code"
rc=0; err=$(sparkc_of a watch bogus 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of watch bogus"
assert_contains "$err" "link-flapping, link-stable" "watch bogus"
assert_contains "$err" "gid-changed" "watch bogus"
assert_contains "$err" "usage: sparkc watch [EVENT]..." "watch bogus"
case "$err" in *"(error -32602)"*) fail "watch bogus shows the bare error code: $err" ;; esac

step "unreachable daemon: exit 2 and the socket named"
rc=0; err=$("$SPARKC" --socket "$TEST_TMP/nobody-here.sock" status 2>&1) || rc=$?
assert_eq "$rc" 2 "exit status when unreachable"
assert_contains "$err" "$TEST_TMP/nobody-here.sock" "error message"
assert_contains "$err" "No such file or directory" "error message"

step "a second daemon on the same socket is refused"
rc=0; ip netns exec "$ns" "$SPARKD" -f --log-target=stderr --socket "$(sock_of a)" --state-dir "$TEST_TMP/b.state" \
        >"$TEST_TMP/second.log" 2>&1 || rc=$?
assert_eq "$rc" 1 "exit status of a second daemon"
assert_contains "$(cat "$TEST_TMP/second.log")" "another sparkd is already serving" "second daemon's log"
sparkc_of a status >/dev/null || fail "the first daemon stopped serving"

step "SIGTERM stops cleanly and removes the socket"
sparkd_stop a TERM
[ ! -e "$(sock_of a)" ] || fail "socket left behind after SIGTERM"

step "a stale socket file is replaced; SIGINT stops too"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$(sock_of a)"
sparkd_start a "$ns"
sparkd_stop a INT
[ ! -e "$(sock_of a)" ] || fail "socket left behind after SIGINT"

step "without -f it forks, and the parent returns only once the daemon serves"
ip netns exec "$ns" "$SPARKD" --log-target=stderr --socket "$(sock_of bg)" --state-dir "$TEST_TMP/bg.state" \
        2>"$(log_of bg)"
sparkc_of bg status >/dev/null || fail "background daemon not serving when its parent returned"
bgpid=$(pgrep -f -- "--socket $(sock_of bg)")
DAEMON_PIDS+=("$bgpid")
kill -TERM "$bgpid"
wait_until 5 test ! -e "$(sock_of bg)" || fail "background daemon did not stop"
pass
