#!/usr/bin/env bash
# A link flap storm, 1,000 carrier changes on a veth in bursts over ~10 s: one link-flapping
# alert and one link-stable once calm, a bounded number of log lines, flaps counted from the
# kernel's counter, and no growth in VmRSS or open fds (read from /proc).
. "$(dirname "$0")/lib.sh"

a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
printf '[fabric]\ninterfaces = fa\nflap_threshold = 3\nflap_window = 2s\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' \
        >"$TEST_TMP/a.conf"
# In a sanitizer build freed memory waits in ASan's quarantine, resident, and would read as growth;
# leaks are still found without it.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
watch_events a
pid=$(pid_of a)
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$pid/status"; }
fds() { ls "/proc/$pid/fd" | wc -l; }

sparkc_of a --json links >/dev/null
rss0=$(rss) fds0=$(fds) lines0=$(wc -l <"$(log_of a)")
changes0=$(ip netns exec "$a" cat /sys/class/net/fa/carrier_changes)

step "1,000 carrier changes"
# 20 bursts of 25 down/up pairs, spaced so the daemon sees many of them, not one merged change.
for burst in $(seq 20); do
        for i in $(seq 25); do printf 'link set fb down\nlink set fb up\n'; done >"$TEST_TMP/burst"
        ip -n "$b" -batch "$TEST_TMP/burst"
        # Load shape, not a wait: spread over ~10 s, the storm reaches the daemon as many
        # notifications (the kernel reports a link's changes at most once a second).
        sleep 0.5
done
changes=$(($(ip netns exec "$a" cat /sys/class/net/fa/carrier_changes) - changes0))
[ "$changes" -ge 1000 ] || fail "the kernel counted only $changes carrier changes"
echo "kernel: $changes carrier changes on fa"

wait_events a link-stable fa 1 10 || fail "no link-stable after the storm"
events_final a link-flapping fa
events_final a link-stable fa
assert_eq "$(count_events a link-flapping fa)" 1 "link-flapping alerts"
assert_eq "$(count_events a link-stable fa)" 1 "link-stable events"
json=$(sparkc_of a --json links)
flaps=$(json_get "$json" '[l["flaps"] for l in d["links"] if l["name"]=="fa"][0]')
[ "$flaps" -ge 500 ] || fail "flaps $flaps after $changes carrier changes"
assert_eq "$(json_get "$json" '[l["oper_up"] for l in d["links"] if l["name"]=="fa"][0]')" True "oper_up"

rss1=$(rss) fds1=$(fds) lines=$(($(wc -l <"$(log_of a)") - lines0))
echo "VmRSS ${rss0} -> ${rss1} KiB, fds ${fds0} -> ${fds1}, ${lines} log lines, ${flaps} flaps counted"
[ "$lines" -le 20 ] || fail "$lines log lines for one flap storm"
[ "$rss1" -le $((rss0 + 2048)) ] || fail "VmRSS grew from $rss0 to $rss1 KiB"
[ "$fds1" -le "$fds0" ] || fail "fds grew from $fds0 to $fds1"
sparkd_stop a
pass
