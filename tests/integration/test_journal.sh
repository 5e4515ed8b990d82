#!/usr/bin/env bash
# Events reach a real systemd-journald with their MESSAGE_ID and SPARKD_* fields, and
# journalctl finds them by those fields.
. "$(dirname "$0")/lib.sh"

journald=/lib/systemd/systemd-journald
[ -x "$journald" ] || skip "needs systemd-journald"
command -v journalctl >/dev/null || skip "needs journalctl"
command -v unshare >/dev/null || skip "needs unshare"

ns=$(netns_new a)
started_id=fdf5842570d44465bbea7c872f6deaf2
rejected_id=8d872d37a8754add93d5d5ce886b7f6b
mkdir -p "$TEST_TMP/journal"
printf '[daemon]\nnode_name = jtest\n' >"$TEST_TMP/j.conf"

export TEST_NAME
export -f wait_until fail

# Everything runs inside a private mount namespace so this journald and its socket are ours alone.
# journald writes what it gets in order: once the daemon's last word at exit is in the journal,
# everything it logged before is.
unshare --mount --propagation private bash -euo pipefail -c '
        mount -t tmpfs tmpfs /run/systemd
        mkdir -p /run/systemd/journal /run/log/journal
        mount --bind "$6" /run/log/journal
        "$1" >"$6/../journald.log" 2>&1 &
        jpid=$! dpid=
        # A failed step must not leave the daemons running (and the test hanging on them).
        trap '"'"'kill -TERM $dpid $jpid 2>/dev/null || true'"'"' EXIT
        journal=$6
        journal_has() { journalctl -D "$journal" --no-pager -q "$@" | grep -q .; }
        wait_until 5 test -S /run/systemd/journal/socket || fail "journald did not start"
        ip netns exec "$2" "$3" -f --log-target=journal -c "$7" --socket "$4" --state-dir "$5" &
        dpid=$!
        wait_until 10 "$8" --socket "$4" status || fail "sparkd did not start"
        printf "[daemon]\nmode = bogus\n" >"$7"
        kill -HUP $dpid
        wait_until 5 journal_has SPARKD_EVENT=config-rejected || fail "the refused reload is not in the journal"
        kill -TERM $dpid
        wait $dpid
        wait_until 5 journal_has SPARKD_EVENT=daemon-stopping || fail "daemon-stopping not in the journal"
        journalctl --sync 2>/dev/null || true
        kill -TERM $jpid
        wait $jpid || true
' _ "$journald" "$ns" "$SPARKD" "$(sock_of a)" "$TEST_TMP/a.state" "$TEST_TMP/journal" "$TEST_TMP/j.conf" \
        "$SPARKC" || fail "the journal run failed"

step "journalctl finds daemon-started by MESSAGE_ID and SPARKD_NODE"
out=$(journalctl -D "$TEST_TMP/journal" --no-pager -o json MESSAGE_ID=$started_id SPARKD_NODE=jtest)
[ -n "$out" ] || fail "no daemon-started entry in the journal"
assert_eq "$(json_get "$out" 'd["SPARKD_EVENT"]')" daemon-started "SPARKD_EVENT"
assert_eq "$(json_get "$out" 'd["SPARKD_SOCKET"]')" "$(sock_of a)" "SPARKD_SOCKET"
assert_eq "$(json_get "$out" 'd["PRIORITY"]')" 6 "PRIORITY"

step "the refused reload is there with the file and line"
out=$(journalctl -D "$TEST_TMP/journal" --no-pager -o json MESSAGE_ID=$rejected_id)
[ -n "$out" ] || fail "no config-rejected entry"
assert_eq "$(json_get "$out" 'd["SPARKD_CONFIG_ERROR"]')" \
        "$TEST_TMP/j.conf:2: mode=\"bogus\": expected \"enforce\" or \"audit\"" "SPARKD_CONFIG_ERROR"
journalctl -D "$TEST_TMP/journal" --no-pager SPARKD_EVENT=daemon-stopping | grep -q "stopping on" ||
        fail "no daemon-stopping entry"
pass
