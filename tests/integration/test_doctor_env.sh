#!/usr/bin/env bash
# On this machine (no RDMA device, no GPU) `sparkc doctor` reports the failures with their fixes
# and exits 2, and `sparkc env` says no fabric was found instead of printing wrong values. With
# the host root pointed at a fixture Spark and a namespace holding its addresses, the daemon
# serves the NCCL environment of that Spark.
. "$(dirname "$0")/lib.sh"

a=$(netns_new a)
printf '[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' >"$TEST_TMP/a.conf"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"

step "doctor on this machine: failures with fixes, exit 2"
rc=0; out=$(sparkc_of a doctor) || rc=$?
assert_eq "$rc" 2 "doctor exit status"
assert_contains "$out" "[FAIL] rdma-devices    no RDMA device found" "doctor"
assert_contains "$out" "fix: install rdma-core" "doctor"
if [ ! -e /proc/driver/nvidia/version ]; then
        assert_contains "$out" "[FAIL] gpu             no NVIDIA GPU driver" "doctor"
        assert_contains "$out" "fix: install the NVIDIA GPU driver" "doctor"
fi
assert_contains "$out" "some checks failed" "doctor"
json=$(sparkc_of a --json doctor) || true
assert_eq "$(json_get "$json" 'd["status"]')" fail "doctor --json status"
assert_eq "$(json_get "$json" '[c["status"] for c in d["checks"] if c["id"]=="rdma-devices"][0]')" fail "rdma-devices"

step "env on this machine: no fabric, nothing printed on stdout, exit 1"
rc=0; out=$(sparkc_of a env 2>"$TEST_TMP/env.err") || rc=$?
assert_eq "$rc" 1 "env exit status"
assert_eq "$out" "" "env stdout"
assert_contains "$(cat "$TEST_TMP/env.err")" "no fabric found: no RDMA device on this node" "env stderr"
rc=0; json=$(sparkc_of a --json env) || rc=$?
assert_eq "$rc" 1 "env --json exit status"
assert_eq "$(json_get "$json" 'd["fabric_found"]')" False "env --json fabric_found"

step "doctor when the daemon is unreachable: exit 3 (unknown)"
rc=0; "$SPARKC" --socket "$TEST_TMP/none.sock" doctor >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 3 "doctor exit status when unreachable"
sparkd_stop a

step "a fixture Spark (seed 001) with its address on a namespace netdev"
b=$(netns_new b)
ip -n "$b" link add enp1s0f1np1 type veth peer name peer0
ip -n "$b" addr add 192.168.177.11/24 dev enp1s0f1np1
ip -n "$b" link set enp1s0f1np1 up
ip -n "$b" link set peer0 up
# A copy, so a step can change its NetworkManager profiles.
cp -a "$TESTS_DIR/../fixtures/hosts/spark-twins" "$TEST_TMP/spark-twins"
fixture=$TEST_TMP/spark-twins
printf '[daemon]\nhost_root = %s\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' "$fixture" >"$TEST_TMP/b.conf"
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
sparkc_of b --json env >/dev/null || fail "env --json with a fabric must exit 0"
out=$(sparkc_of b env)
assert_contains "$out" "export NCCL_IB_HCA='=roceP2p1s0f1:1,rocep1s0f1:1'" "env"
assert_contains "$out" "export NCCL_SOCKET_IFNAME='=enp1s0f1np1'" "env"
assert_contains "$out" "# sparkd: mode safe" "env"
( eval "$out"; [ "${NCCL_IB_GID_INDEX:-unset}" = unset ] && [ "$NCCL_IB_HCA" = "=roceP2p1s0f1:1,rocep1s0f1:1" ] ) || fail "eval of sparkc env"
( eval "$out"; [ "$NCCL_NET_GDR_LEVEL" = LOC ] && [ "$NCCL_DMABUF_ENABLE" = 0 ] ) || fail "safe-mode variables"
out=$(sparkc_of b env --format systemd)
assert_contains "$out" "[Service]" "systemd format"
assert_contains "$out" 'Environment="NCCL_DMABUF_ENABLE=0"' "systemd format"
out=$(sparkc_of b env --format docker --mode dmabuf)
assert_contains "$out" "NCCL_DMABUF_ENABLE=1" "docker format, dmabuf forced"
assert_contains "$out" "asked for, but" "dmabuf forced on a host that cannot"
rc=0; sparkc_of b env --mode turbo >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 1 "bad --mode"
out=$(sparkc_of b fabric)
assert_contains "$out" "rocep1s0f1" "fabric table"

step "doctor: the NetworkManager profiles of the fabric netdevs, read afresh at each request"
out=$(sparkc_of b doctor) || true
assert_contains "$out" "[ ok ] mtu-profile     no profile of a fabric netdev sets an MTU other than 9000" "doctor"
sed -i 's/^mtu=9000$/mtu=1500/' "$fixture/etc/NetworkManager/system-connections/enp1s0f1np1.nmconnection"
rc=0; out=$(sparkc_of b doctor) || rc=$?
assert_contains "$out" "[WARN] mtu-profile     1 profile will set a fabric netdev's MTU other than 9000 on reconnect" "doctor"
assert_contains "$out" "fix: nmcli connection modify enp1s0f1np1 802-3-ethernet.mtu 9000" "doctor"
[ "$rc" -ge 1 ] || fail "doctor exit status $rc with a profile that undoes the MTU"
sparkd_stop b
pass
