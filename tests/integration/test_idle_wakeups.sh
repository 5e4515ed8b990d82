#!/usr/bin/env bash
# An idle daemon (no peers, no probes due, no fabric port, no metrics textfile) sleeps: its
# timers are set to what is due, and the rechecks of links, sysctls and GID tables share one timer
# at the default recheck_interval (60s), so over a minute it wakes once for that recheck, besides
# the end of its start-up. Measured with mDNS
# off, and with mDNS on in a namespace with its own avahi-daemon where Avahi is installed.
# voluntary_ctxt_switches in /proc/PID/status counts each time it comes back from a wait.
# tests/bench/idle_wakeups.sh measures the same over minutes.
. "$(dirname "$0")/lib.sh"

# The start-up's last wakeup may fall into the window (the status client's goodbye, Avahi's last
# answers): at most this many besides the recheck.
START_UP_TAIL=1
WINDOW_SEC=65

nodes=(quiet)
a=$(netns_new a)
printf '[peers]\nmdns = no\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' >"$TEST_TMP/quiet.conf"
sparkd_start quiet "$a" -c "$TEST_TMP/quiet.conf"

has_avahi=yes
for cmd in avahi-daemon dbus-daemon dbus-send nsenter unshare; do
        command -v "$cmd" >/dev/null || has_avahi=no
done
if [ "$has_avahi" = yes ]; then
        . "$(dirname "$0")/lib_avahi.sh"
        m=$(netns_new m)
        avahi_host "$m" sparkm
        "$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
        printf '[peers]\nmdns = yes\nkey_file = %s\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' \
                "$TEST_TMP/cluster.key" >"$TEST_TMP/mdns.conf"
        sparkd_start_avahi mdns "$m" -c "$TEST_TMP/mdns.conf"
        # Its record is published (Avahi probes the name for about a second) before the window.
        wait_until 10 grep -q "mDNS: published" "$(log_of mdns)" || fail "mdns: its record was not published"
        nodes+=(mdns)
else
        echo "no Avahi here (avahi-daemon, dbus): measuring with mDNS off only"
fi

switches() { awk '/^voluntary_ctxt_switches:/ {print $2}' "/proc/$(pid_of "$1")/status"; }
declare -A before
for n in "${nodes[@]}"; do
        sparkd_caught_up "$n"
        before[$n]=$(switches "$n")
done

step "at most one wakeup a minute (the recheck) in ${WINDOW_SEC} s, besides the start-up's end"
sleep "$WINDOW_SEC" # the measurement window itself: the daemons are left alone for it
for n in "${nodes[@]}"; do
        woke=$(($(switches "$n") - before[$n]))
        echo "$n: woke $woke times in ${WINDOW_SEC} s"
        [ "$woke" -le $((1 + START_UP_TAIL)) ] ||
                fail "$n: the idle daemon woke $woke times in ${WINDOW_SEC} s (at most $((1 + START_UP_TAIL)))"
done
for n in "${nodes[@]}"; do sparkd_stop "$n"; done
pass
