#!/usr/bin/env bash
# A netdev's driver statistics as sparkd reads them (SIOCETHTOOL: the set's size, its names, its
# values) are what `ethtool -S` shows, on a real veth: the same names in the same order and the
# same values (peer_ifindex is the peer's ifindex, not a zero). A daemon watching that veth as a
# fabric port keeps none of them, only its netdev statistics' CRC errors (veth has none of mlx5's
# names: tests/unit/test_driver_stats.c judges those), and reads it without a warning.
. "$(dirname "$0")/lib.sh"

DUMP=${DRIVER_STATS_DUMP_BIN:?DRIVER_STATS_DUMP_BIN must name the driver-stats-dump test program}
command -v ethtool >/dev/null || skip "needs ethtool (scripts/deps.sh test installs it)"

a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" va "$b" vb 10.78.0.1/24 10.78.0.2/24

step "the same names and values as ethtool -S"
ip netns exec "$a" ethtool -S va >"$TEST_TMP/ethtool.txt"
ip netns exec "$a" "$DUMP" va >"$TEST_TMP/sparkd.txt"
diff -u "$TEST_TMP/ethtool.txt" "$TEST_TMP/sparkd.txt" || fail "driver statistics differ from ethtool -S"
peer=$(ip -n "$b" -o link show vb | cut -d: -f1)
grep -qx "     peer_ifindex: $peer" "$TEST_TMP/sparkd.txt" || fail "peer_ifindex is not vb's ifindex $peer"
[ "$(grep -c ': ' "$TEST_TMP/sparkd.txt")" -gt 1 ] || fail "fewer statistics than veth has"

step "a netdev that is not here is named in the error"
! out=$(ip netns exec "$a" "$DUMP" vb 2>&1) || fail "read vb in a namespace without it"
assert_contains "$out" "vb: cannot read its driver statistics: No such device" "error"

step "a daemon watching the veth keeps none of its statistics, and says nothing about them"
printf '[fabric]\ninterfaces = va\n[counters]\nperiod = 1s\n[peers]\nmdns = no\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' \
        >"$TEST_TMP/a.conf"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"
wait_until 10 sh -c "'$SPARKC' --socket '$(sock_of a)' metrics | grep -q 'sparkd_port_bytes_total{.*iface=\"va\"'" ||
        fail "the counter watch did not look at va: $(sparkc_of a metrics | grep port_)"
counters=$(sparkc_of a metrics | sed -n 's/^sparkd_port_errors_total{.*iface="va",counter="\([a-z_0-9]*\)"}.*/\1/p')
assert_eq "$counters" rx_crc_errors "va's error counters (its netdev statistics' only)"
assert_not_contains "$(grep -i 'counter\|statistic' "$(log_of a)" || true)" "warning" "daemon log on counters"
sparkd_stop a
pass
