#!/usr/bin/env bash
# Link events reach a real systemd-journald with their MESSAGE_IDs and SPARKD_IFACE, SPARKD_OLD
# and SPARKD_NEW, and journalctl finds them by those fields.
. "$(dirname "$0")/lib.sh"

journald=/lib/systemd/systemd-journald
[ -x "$journald" ] || skip "needs systemd-journald"
command -v journalctl >/dev/null || skip "needs journalctl"

a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb 10.99.0.1/24 10.99.0.2/24
printf '[fabric]\ninterfaces = fa\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' >"$TEST_TMP/a.conf"
mkdir -p "$TEST_TMP/journal"
export TEST_NAME
export -f wait_until fail

# Each step waits for its entry in the journal; the up only once the down is in, as the kernel
# merges carrier changes that it has not reported yet. journald writes what it gets in order, so
# once the daemon's last word at exit is in the journal, everything it logged before is.
unshare --mount --propagation private bash -euo pipefail -c '
        journald=$1 a=$2 b=$3 sparkd=$4 sparkc=$5 sock=$6 state=$7 journal=$8 conf=$9
        mount -t tmpfs tmpfs /run/systemd
        mkdir -p /run/systemd/journal /run/log/journal
        mount --bind "$journal" /run/log/journal
        "$journald" >"$journal/../journald.log" 2>&1 &
        jpid=$! dpid=
        # A failed step must not leave the daemons running (and the test hanging on them).
        trap '"'"'kill -TERM $dpid $jpid 2>/dev/null || true'"'"' EXIT
        journal_has() { journalctl -D "$journal" --no-pager -q "$@" | grep -q .; }
        wait_until 5 test -S /run/systemd/journal/socket || fail "journald did not start"
        ip netns exec "$a" "$sparkd" -f --log-target=journal -c "$conf" --socket "$sock" --state-dir "$state" &
        dpid=$!
        wait_until 10 "$sparkc" --socket "$sock" status || fail "sparkd did not start"
        ip -n "$a" link set fa mtu 1500
        ip -n "$b" link set fb down
        wait_until 5 journal_has SPARKD_EVENT=link-down SPARKD_IFACE=fa || fail "no link-down in the journal"
        ip -n "$b" link set fb up
        wait_until 5 journal_has SPARKD_EVENT=link-up SPARKD_IFACE=fa || fail "no link-up in the journal"
        kill -TERM $dpid
        wait $dpid
        wait_until 5 journal_has SPARKD_EVENT=daemon-stopping || fail "daemon-stopping not in the journal"
        kill -TERM $jpid
        wait $jpid || true
' _ "$journald" "$a" "$b" "$SPARKD" "$SPARKC" "$(sock_of a)" "$TEST_TMP/a.state" "$TEST_TMP/journal" \
        "$TEST_TMP/a.conf" || fail "the journal run failed"

# The newest matching entry (the MTU is also corrected once at start: veth begins at 1500).
query() { journalctl -D "$TEST_TMP/journal" --no-pager -o json -n 1 "$@"; }

step "mtu-corrected by MESSAGE_ID and SPARKD_IFACE, with old and new values"
# Two: the correction at start and the one after the test's own `ip link set fa mtu 1500`.
n=$(journalctl -D "$TEST_TMP/journal" --no-pager -o json MESSAGE_ID=406a7fa9a18345a2945690c4409f8424 \
        SPARKD_IFACE=fa | wc -l)
assert_eq "$n" 2 "mtu-corrected entries for fa"
out=$(query MESSAGE_ID=406a7fa9a18345a2945690c4409f8424 SPARKD_IFACE=fa)
[ -n "$out" ] || fail "no mtu-corrected entry for fa"
assert_eq "$(json_get "$out" 'd["SPARKD_OLD"] + "->" + d["SPARKD_NEW"]')" "1500->9000" "old and new MTU"
assert_eq "$(json_get "$out" 'd["SPARKD_EVENT"]')" mtu-corrected "SPARKD_EVENT"

step "link-down and link-up"
out=$(query MESSAGE_ID=700a3d21d70246b78e521f3025ede72c SPARKD_IFACE=fa)
[ -n "$out" ] || fail "no link-down entry"
assert_eq "$(json_get "$out" 'd["SPARKD_OLD"]')" up "link-down SPARKD_OLD"
assert_eq "$(json_get "$out" 'd["PRIORITY"]')" 4 "link-down priority (warning)"
out=$(query MESSAGE_ID=7a6dea60a9ef4156a78ca2d74a54bec1 SPARKD_IFACE=fa)
[ -n "$out" ] || fail "no link-up entry"
[ -z "$(query MESSAGE_ID=700a3d21d70246b78e521f3025ede72c SPARKD_IFACE=nosuch)" ] || fail "filter by SPARKD_IFACE"
journalctl -D "$TEST_TMP/journal" --no-pager SPARKD_EVENT=link-down | grep -q "fa is down" || fail "by SPARKD_EVENT"
pass
