#!/usr/bin/env bash
# 10,000 API connections opened and dropped (some mid-line, some leaving their answer unread)
# while 100 slow clients hold half a line, some trickling a byte every 2 s: the daemon answers
# others throughout, its VmRSS and open fds stay bounded, and every slow client is cut off 30 s
# after its line began (api_load.py measures from /proc); refusals of a full client table are
# logged as a summary, not one line each.
. "$(dirname "$0")/lib.sh"

ns=$(netns_new a)
sparkd_start a "$ns"
sanitized=$(ldd "$SPARKD" 2>/dev/null | grep -E 'lib(asan|ubsan)' >/dev/null && echo 1 || true)
SPARKD_SANITIZED=$sanitized python3 "$TESTS_DIR/api_load.py" "$(sock_of a)" "$(pid_of a)" || fail "api load"
n=$(grep -c "no complete line within 30 s" "$(log_of a)" || true)
[ "$n" -ge 100 ] || fail "$n slow clients logged as cut off, expected at least 100"
refusals=$(grep -c "refusing a client" "$(log_of a)" || true)
[ "$refusals" -le 5 ] || fail "$refusals log lines for refused clients: a storm must be summarised"
sparkd_stop a
pass
