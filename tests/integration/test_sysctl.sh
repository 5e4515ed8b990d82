#!/usr/bin/env bash
# A sysctl changed behind sparkd's back is set back, on the timer; audit mode only reports it.
# net.core.* is read-only inside a child network namespace, so this daemon runs in the initial
# one; it manages no interface there ([fabric] names none and this host has no RDMA device), and
# the host's value is restored on exit.
. "$(dirname "$0")/lib.sh"

orig=$(cat /proc/sys/net/core/rmem_max)
restore() { echo "$orig" >/proc/sys/net/core/rmem_max; }
trap 'rc=$?; restore; (exit $rc); cleanup' EXIT
want=$((orig + 4096))
ls /sys/class/net/*/device/infiniband >/dev/null 2>&1 && skip "this host has RDMA devices; not touching them"

cat >"$TEST_TMP/h.conf" <<CONF
[daemon]
recheck_interval = 1s
[sysctl]
net.core.rmem_max = $want
net.core.wmem_max =
CONF
"$SPARKD" -f --log-target=stderr -c "$TEST_TMP/h.conf" --socket "$(sock_of h)" --state-dir "$TEST_TMP/h.state" \
        >>"$(log_of h)" 2>&1 &
DAEMON_PIDS+=("$!")
DAEMON_PID_OF[h]=$!
wait_until 10 sparkc_of h status || fail "daemon did not start"

step "set at start"
assert_eq "$(cat /proc/sys/net/core/rmem_max)" "$want" "rmem_max after start"
watch_events h

step "changed behind its back: set back within the recheck interval"
echo "$orig" >/proc/sys/net/core/rmem_max
wait_events h sysctl-corrected "" 1 3 || fail "no sysctl-corrected event"
assert_eq "$(cat /proc/sys/net/core/rmem_max)" "$want" "rmem_max after the timer"
json=$(sparkc_of h --json links)
assert_eq "$(json_get "$json" '[s["state"] for s in d["sysctls"] if s["name"]=="net.core.rmem_max"][0]')" ok "state"
assert_eq "$(json_get "$json" '[s for s in d["sysctls"] if s["name"]=="net.core.wmem_max"]')" "[]" "unmanaged wmem_max"

step "audit mode reports once and leaves it"
sed -i '1a mode = audit' "$TEST_TMP/h.conf"
sparkc_of h reload >/dev/null
echo "$orig" >/proc/sys/net/core/rmem_max
wait_events h sysctl-drift "" 1 3 || fail "no sysctl-drift event"
# The daemon shows no recheck that finds the drift it reported: two recheck_interval ticks must
# pass to show that it is not reported again.
sleep 2.2
events_final h sysctl-drift
assert_eq "$(count_events h sysctl-drift)" 1 "drift reported once"
assert_eq "$(cat /proc/sys/net/core/rmem_max)" "$orig" "rmem_max in audit mode"
assert_contains "$(sparkc_of h links)" "drift" "links table"

step "reload re-checks at once"
sed -i 's/mode = audit/mode = enforce/' "$TEST_TMP/h.conf"
sparkc_of h reload >/dev/null
assert_eq "$(cat /proc/sys/net/core/rmem_max)" "$want" "rmem_max right after reload"
sparkd_stop h
pass
