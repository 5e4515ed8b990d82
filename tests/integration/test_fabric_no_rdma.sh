#!/usr/bin/env bash
# A test bed node without RDMA, fab0 named in [fabric] interfaces (the configured-fabric fixture):
# `sparkc fabric` says why there is no RDMA device and what to do, and names fab0; the doctor
# checks fab0's MTU as links shows it. With the RDMA modules loaded but no device, fabric says
# that instead; beside RDMA devices, fabric lists fab0 after them.
. "$(dirname "$0")/lib.sh"

a=$(netns_new a)
fixture_host configured-fabric "$TEST_TMP/host"
printf '[daemon]\nhost_root = %s\n[fabric]\ninterfaces = fab0\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' \
        "$TEST_TMP/host" >"$TEST_TMP/a.conf"
sparkd_start a "$a" -c "$TEST_TMP/a.conf"

step "fabric without RDMA modules: why, what to do, and the configured netdev"
rc=0; out=$(sparkc_of a fabric) || rc=$?
assert_eq "$rc" 0 "fabric exit status"
assert_contains "$out" "no RDMA device found" "fabric"
assert_contains "$out" "why: the RDMA kernel modules ib_core, ib_uverbs, mlx5_core, mlx5_ib, rdma_cm, rdma_ucm are not loaded" "fabric"
assert_contains "$out" "do:  modprobe mlx5_ib rdma_ucm" "fabric"
assert_contains "$out" "TCP sockets on the fabric netdevs named in [fabric] interfaces (fab0)" "fabric"

step "the doctor checks the configured netdev's MTU"
out=$(sparkc_of a doctor) || true
assert_contains "$out" "[ ok ] mtu             every fabric netdev that is up has MTU 9000" "doctor"
assert_contains "$out" "fab0: MTU 9000, up" "doctor"

step "modules loaded, no device: fabric says so"
for m in ib_core ib_uverbs mlx5_core mlx5_ib rdma_cm rdma_ucm; do
        mkdir -p "$TEST_TMP/host/sys/module/$m"
        echo live >"$TEST_TMP/host/sys/module/$m/initstate"
done
out=$(sparkc_of a fabric)
assert_contains "$out" "why: the RDMA kernel modules are loaded, but no device registered" "fabric"
assert_contains "$out" "dmesg | grep mlx5" "fabric"
sparkd_stop a

step "beside RDMA devices, fabric lists the configured netdev without RDMA"
fixture_host spark-twins "$TEST_TMP/twins"
cp -a "$TEST_TMP/host/sys/devices/virtual/net/fab0" "$TEST_TMP/twins/sys/devices/virtual/net/"
ln -s ../../devices/virtual/net/fab0 "$TEST_TMP/twins/sys/class/net/fab0"
sed "s|$TEST_TMP/host|$TEST_TMP/twins|" "$TEST_TMP/a.conf" >"$TEST_TMP/b.conf"
b=$(netns_new b)
sparkd_start b "$b" -c "$TEST_TMP/b.conf"
out=$(sparkc_of b fabric)
assert_contains "$out" "rocep1s0f1" "fabric table"
assert_contains "$out" "named in [fabric] interfaces, without RDMA (NCCL uses them through TCP): fab0" "fabric"
out=$(sparkc_of b doctor) || true
assert_contains "$out" "fab0: MTU 9000, up" "doctor"
sparkd_stop b
pass
