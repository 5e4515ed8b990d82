#!/usr/bin/env bash
# An idle daemon (no peers, no probes due, no fabric port, no metrics textfile) sleeps: its
# timers are set to what is due, so over 10 s it wakes at most for the end of its start-up (the
# schedule's first look, the status client leaving). voluntary_ctxt_switches in /proc/PID/status
# counts each time it comes back from a wait.
# tests/bench/idle_wakeups.sh measures the same over minutes.
. "$(dirname "$0")/lib.sh"

a=$(netns_new a)
printf '[daemon]\nrecheck_interval = 60s\n[peers]\nmdns = no\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' >"$TEST_TMP/a.conf"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
sparkd_caught_up a
switches() { awk '/^voluntary_ctxt_switches:/ {print $2}' "/proc/$(pid_of a)/status"; }

step "at most the start-up's last two wakeups in 10 s"
before=$(switches)
sleep 10 # the measurement window itself: the daemon is left alone for it
after=$(switches)
[ $((after - before)) -le 2 ] || fail "the idle daemon woke $((after - before)) times in 10 s"
sparkd_stop a
pass
