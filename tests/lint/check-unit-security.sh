#!/usr/bin/env bash
# systemd-analyze security's overall exposure of systemd/sparkd.service must stay at or below
# MAX (default 3.0, "OK"), judged offline from the unit file, so a hardening line that goes away
# fails here. Also checks what the watchdog needs: WatchdogSec= and a Restart= that covers it.
#
# usage: check-unit-security.sh SOURCE_ROOT [MAX]
# exit:  0 pass, 1 fail, 77 skip (systemd-analyze too old for --offline)
set -u

src=$1
max=${2:-3.0}
unit=$src/systemd/sparkd.service

command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
out=$(systemd-analyze security --offline=yes --no-pager "$unit" 2>&1)
rc=$?
if grep -q "unrecognized option\|Unknown option" <<<"$out"; then
        echo "SKIP: systemd-analyze has no --offline (systemd 250 or newer)"
        exit 77
fi
level=$(sed -n 's/.*Overall exposure level for sparkd.service: \([0-9.]*\) .*/\1/p' <<<"$out")
if [ -z "$level" ]; then
        echo "$out" | tail -n 20
        echo "FAIL: no exposure level in systemd-analyze's output (exit $rc)"
        exit 1
fi
failures=0
if awk -v l="$level" -v m="$max" 'BEGIN { exit !(l <= m) }'; then
        echo "ok:   exposure $level <= $max"
else
        grep '✗' <<<"$out"
        echo "FAIL: exposure $level > $max (the settings that add to it are above)"
        failures=$((failures + 1))
fi

watchdog=$(sed -n 's/^WatchdogSec=//p' "$unit")
restart=$(sed -n 's/^Restart=//p' "$unit")
if [ -n "$watchdog" ] && [ "$watchdog" != 0 ]; then
        echo "ok:   WatchdogSec=$watchdog"
else
        echo "FAIL: sparkd.service has no WatchdogSec="
        failures=$((failures + 1))
fi
case $restart in
on-failure | on-watchdog | on-abnormal | always) echo "ok:   Restart=$restart restarts a daemon the watchdog stopped" ;;
*)
        echo "FAIL: Restart=$restart does not restart after a watchdog timeout"
        failures=$((failures + 1))
        ;;
esac

[ "$failures" -eq 0 ] || exit 1
echo "PASS: sparkd.service exposure $level, watchdog with restart"
