#!/usr/bin/env bash
# Bad host-state settings: an interface that does not exist is a warning (it may appear later),
# an MTU out of range and an unknown sysctl are errors with FILE:LINE; a reload with errors keeps
# the running config, one with only warnings is applied.
. "$(dirname "$0")/lib.sh"

conf=$TEST_TMP/a.conf
a=$(netns_new a)
b=$(netns_new b)
veth_pair "$a" fa "$b" fb

step "--check-config: warning for a missing interface, errors for MTU and sysctl"
printf '[fabric]\ninterfaces = fa\ndown = nosuch0\n' >"$conf"
out=$("$SPARKD" --check-config -c "$conf" 2>&1) || fail "a missing interface must not fail the check: $out"
assert_contains "$out" "$conf:3: warning: down: interface \"nosuch0\" does not exist (now)" "check output"
printf '[fabric]\nmtu = 100000\n[sysctl]\nnet.core.no_such = 1\n' >"$TEST_TMP/bad.conf"
rc=0; out=$("$SPARKD" --check-config -c "$TEST_TMP/bad.conf" 2>&1) || rc=$?
assert_eq "$rc" 1 "exit status"
assert_contains "$out" "$TEST_TMP/bad.conf:2: mtu=\"100000\": expected an MTU from 1280 to 9978" "MTU error"
assert_contains "$out" "$TEST_TMP/bad.conf:4: unknown sysctl \"net.core.no_such\"" "sysctl error"

step "the daemon starts with a missing interface named, and manages the rest"
printf '[fabric]\ninterfaces = fa\nmtu = 4000\ndown = nosuch0\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' >"$conf"
sparkd_start a "$a" -c "$conf"
assert_eq "$(mtu_of "$a" fa)" 4000 "MTU from config"
grep -q "warning: down: interface \"nosuch0\"" "$(log_of a)" || fail "warning not logged"

step "a reload with an out-of-range MTU is refused; the running MTU stays enforced"
sed -i 's/mtu = 4000/mtu = 100000/' "$conf"
rc=0; out=$(sparkc_of a reload 2>&1) || rc=$?
assert_eq "$rc" 1 "reload exit status"
assert_contains "$out" "$conf:3: mtu=\"100000\"" "reload errors"
ip -n "$a" link set fa mtu 1500
wait_until 2 sh -c "ip -n '$a' -o link show fa | grep -q 'mtu 4000'" || fail "old MTU no longer enforced"

step "a reload with an unknown sysctl is refused; the daemon serves on with the running config"
sed -i 's/mtu = 100000/mtu = 4000/; s/^net.core.wmem_max =$/net.core.wmem_max =\nnet.core.no_such = 1/' "$conf"
rc=0; out=$(sparkc_of a reload 2>&1) || rc=$?
assert_eq "$rc" 1 "reload exit status"
assert_contains "$out" "$conf:8: unknown sysctl \"net.core.no_such\"" "reload errors"
sparkc_of a status >/dev/null || fail "daemon not serving after a refused reload"
sed -i '/^net.core.no_such = 1$/d' "$conf"

step "the interface appears later and is then managed"
sed -i 's/mtu = 4000/mtu = 9000/; s/down = nosuch0/down = nosuch0\ninterfaces = fa late0/' "$conf"
sed -i '/^interfaces = fa$/d' "$conf"
sparkc_of a reload >/dev/null || fail "reload with only warnings refused"
assert_eq "$(mtu_of "$a" fa)" 9000 "MTU after reload"
ip -n "$a" link add late0 type veth peer name late1
wait_until 2 sh -c "ip -n '$a' -o link show late0 | grep -q 'mtu 9000'" || fail "new interface not managed"
ip -n "$a" link add nosuch0 type veth peer name nosuch1
ip -n "$a" link set nosuch0 up
wait_until 2 sh -c "! ip -n '$a' -o link show nosuch0 | grep -q '[<,]UP[,>]'" || fail "late port not kept down"
sparkd_stop a
pass
