#!/usr/bin/env bash
# An idle daemon (no peers, no probes due, no fabric port, no metrics textfile) sleeps: its
# timers are set to what is due, and the rechecks of links, sysctls and GID tables share one timer
# at the default recheck_interval (60s), so over a minute it wakes once for that recheck once its
# start-up is over. Measured with mDNS
# off, and with mDNS on in a namespace with its own avahi-daemon where Avahi is installed.
# voluntary_ctxt_switches in /proc/PID/status counts each time it comes back from a wait.
# tests/bench/idle_wakeups.sh measures the same over minutes.
. "$(dirname "$0")/lib.sh"
# What it counts is the loop's timers, the same code in every build; an idle daemon touches no
# memory a sanitizer would check, so the sanitizer build would only wait out the window again.
is_sanitizer_build && skip "measured in the build without sanitizers"

# The window is longer than the recheck interval, so a second recheck may fall into it: at most
# this many wakeups besides the one recheck.
WINDOW_TAIL=1
WINDOW_SEC=65
# Start-up is over once the daemon slept this long: Avahi's answers to its browser and to the
# resolver of its own record come seconds late on a loaded machine.
SETTLE_SEC=3

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
# settled NAME: true once NAME's daemon has not woken for SETTLE_SEC.
settled() {
        local at
        at=$(switches "$1")
        sleep "$SETTLE_SEC" # the quiet time asked for, measured: not a wait for an event
        [ "$(switches "$1")" = "$at" ]
}
declare -A before
for n in "${nodes[@]}"; do
        sparkd_caught_up "$n"
done
for n in "${nodes[@]}"; do
        tries=0
        until settled "$n"; do
                tries=$((tries + 1))
                [ "$tries" -lt $((40 / SETTLE_SEC)) ] || fail "$n: still waking after 40 s (start-up never ends)"
        done
        before[$n]=$(switches "$n")
done

step "at most one wakeup a minute (the recheck) in ${WINDOW_SEC} s once start-up is over"
sleep "$WINDOW_SEC" # the measurement window itself: the daemons are left alone for it
for n in "${nodes[@]}"; do
        woke=$(($(switches "$n") - before[$n]))
        echo "$n: woke $woke times in ${WINDOW_SEC} s"
        [ "$woke" -le $((1 + WINDOW_TAIL)) ] ||
                fail "$n: the idle daemon woke $woke times in ${WINDOW_SEC} s (at most $((1 + WINDOW_TAIL)))"
done
for n in "${nodes[@]}"; do sparkd_stop "$n"; done
pass
