#!/usr/bin/env bash
# --check-config names the file and line of every error; SIGHUP and `sparkc reload` apply a good
# config and refuse a broken one, keeping the running config.
. "$(dirname "$0")/lib.sh"

conf=$TEST_TMP/sparkd.conf
mkdir -p "$conf.d"

step "--check-config"
printf '[daemon]\nnode_name = alpha\nmode = audit\n' >"$conf"
out=$("$SPARKD" --check-config -c "$conf")
assert_contains "$out" "$conf: ok" "check of a good config"
printf '[daemon]\nnode_name = alpha\nmode = sometimes\n[api]\nsocket_mode = 0660\nbogus = 1\n' >"$TEST_TMP/bad.conf"
rc=0; err=$("$SPARKD" --check-config -c "$TEST_TMP/bad.conf" 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of --check-config on errors"
assert_contains "$err" "$TEST_TMP/bad.conf:3: mode=\"sometimes\": expected \"enforce\" or \"audit\"" "errors"
assert_contains "$err" "$TEST_TMP/bad.conf:6: unknown key \"bogus\" in [api]" "errors"
printf '[daemon]\nmode = audit\n' >"$conf.d/50-x.conf"
printf '[daemon]\n\n\nlog_level = chatty\n' >"$conf.d/60-y.conf"
rc=0; err=$("$SPARKD" --check-config -c "$conf" 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status with a bad drop-in"
assert_contains "$err" "$conf.d/60-y.conf:4: log_level=\"chatty\"" "drop-in error"
rm "$conf.d/60-y.conf"

step "start with the config"
ns=$(netns_new a)
sparkd_start a "$ns" -c "$conf"
json=$(sparkc_of a --json status)
assert_eq "$(json_get "$json" 'd["node"]')" alpha "node name from config"
assert_eq "$(json_get "$json" 'd["mode"]')" audit "mode from config"
assert_eq "$(json_get "$json" 'len(d["config_files"])')" 2 "files read (main and drop-in)"

sparkc_of a --json watch config-reloaded config-rejected >"$TEST_TMP/events.jsonl" 2>"$TEST_TMP/watch.err" &
watcher=$!
wait_until 5 grep -q watching "$TEST_TMP/watch.err" || fail "watch did not start"

step "SIGHUP with a broken config keeps the old one"
printf '[daemon]\nnode_name = beta\nmode = never\n' >"$conf"
kill -HUP "$(pid_of a)"
wait_until 5 grep -q "config not applied: $conf:3" "$(log_of a)" || fail "broken config not reported with FILE:LINE"
assert_eq "$(json_get "$(sparkc_of a --json status)" 'd["node"]')" alpha "node name after a refused reload"

step "sparkc reload with a broken config: exit 1 and the errors"
rc=0; err=$(sparkc_of a reload 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status of a refused reload"
assert_contains "$err" "$conf:3: mode=\"never\"" "reload errors"

step "a fixed config is applied by SIGHUP"
printf '[daemon]\nnode_name = beta\nmode = enforce\n' >"$conf"
kill -HUP "$(pid_of a)"
wait_until 5 sh -c "'$SPARKC' --socket '$(sock_of a)' status | grep -q 'node        beta'" ||
        fail "node name not changed by SIGHUP"
json=$(sparkc_of a --json status)
assert_eq "$(json_get "$json" 'd["mode"]')" audit "mode (the drop-in still says audit)"
assert_eq "$(json_get "$json" 'd["reloads"]')" 1 "reload count"

step "watch saw the rejection and the reload"
wait_until 5 grep -q config-reloaded "$TEST_TMP/events.jsonl" || fail "no config-reloaded event: $(cat "$TEST_TMP/events.jsonl")"
grep -q '"event":"config-rejected"' "$TEST_TMP/events.jsonl" || fail "no config-rejected event"
kill "$watcher" 2>/dev/null || true
sparkd_stop a
pass
