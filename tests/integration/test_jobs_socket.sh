#!/usr/bin/env bash
# A fabric declared without RDMA ([fabric] rdma = no) is a choice, not a failure: two nodes on a
# veth cable (fab0 on each, named in [fabric] interfaces), hosts with a GPU driver and NCCL but no
# RDMA device (the nccl-build-a fixture, spark-twins' GB10, fab0 from configured-fabric). The doctor passes its
# socket-fabric check and fails nothing for the missing RDMA; `env`, `env --for torchrun` and
# `hostfile` give NCCL's socket transport (NCCL_SOCKET_IFNAME=fab0, NCCL_IB_DISABLE=1) and
# both nodes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_peers.sh"

"$SPARKC" keygen "$TEST_TMP/cluster.key" >/dev/null
declare -A NS ADDR=([a]=10.77.0.1 [b]=10.77.0.2)
NS[a]=$(netns_new a)
NS[b]=$(netns_new b)
veth_pair "${NS[a]}" fab0 "${NS[b]}" fab0 10.77.0.1/24 10.77.0.2/24
for n in a b; do
        cp -a "$TESTS_DIR/../fixtures/hosts/nccl-build-a" "$TEST_TMP/host-$n"
        # A GB10 as the driver lists it (spark-twins'), so the doctor's GPU check passes.
        cp -a "$TESTS_DIR/../fixtures/hosts/spark-twins/proc/driver/nvidia/gpus" "$TEST_TMP/host-$n/proc/driver/nvidia/"
        mkdir -p "$TEST_TMP/host-$n/sys/devices/virtual/net"
        cp -a "$TESTS_DIR/../fixtures/hosts/configured-fabric/sys/devices/virtual/net/fab0" "$TEST_TMP/host-$n/sys/devices/virtual/net/"
        ln -s ../../devices/virtual/net/fab0 "$TEST_TMP/host-$n/sys/class/net/fab0"
done
peer_conf spark-a fab0 10.77.0.2 "[daemon]" "host_root = $TEST_TMP/host-a" "[fabric]" "rdma = no"
peer_conf spark-b fab0 10.77.0.1 "[daemon]" "host_root = $TEST_TMP/host-b" "[fabric]" "rdma = no"
sparkd_start spark-a "${NS[a]}" -c "$TEST_TMP/spark-a.conf"
sparkd_start spark-b "${NS[b]}" -c "$TEST_TMP/spark-b.conf"
wait_pairs up 15 "spark-a spark-b" "spark-b spark-a"

step "doctor: the socket fabric checked, nothing failed for the missing RDMA"
out=$(sparkc_of spark-a doctor) || true
echo "$out" | grep -v '^\[ ok \]' || true
assert_contains "$out" "[ ok ] socket-fabric   [fabric] rdma = no: NCCL over TCP sockets on fab0" "doctor"
assert_not_contains "$out" "rdma-devices" "doctor"
assert_not_contains "$out" "[FAIL]" "doctor"

step "env: the socket transport's settings"
out=$(sparkc_of spark-a env)
assert_contains "$out" "export NCCL_SOCKET_IFNAME='=fab0'" "env"
assert_contains "$out" "export NCCL_IB_DISABLE='1'" "env"
assert_not_contains "$out" "NCCL_IB_HCA" "env"

step "env --for torchrun and hostfile: both nodes"
size_is() { [ "$(json_get "$(sparkc_of "$1" --json hostfile)" 'd["size"]')" = "$2" ]; }
for n in a b; do wait_until 15 size_is "spark-$n" 2 || fail "spark-$n's plan: $(sparkc_of "spark-$n" plan)"; done
declare -A RANK
for n in a b; do
        out=$(sparkc_of "spark-$n" env --for torchrun) || fail "env --for torchrun on spark-$n"
        assert_contains "$out" "export NCCL_IB_DISABLE='1'" "spark-$n env --for torchrun"
        assert_contains "$out" "export NCCL_SOCKET_IFNAME='=fab0'" "spark-$n env --for torchrun"
        eval "$out"
        echo "spark-$n: MASTER_ADDR=$MASTER_ADDR NNODES=$NNODES NODE_RANK=$NODE_RANK"
        assert_eq "$MASTER_ADDR" 10.77.0.1 "spark-$n's rendezvous"
        assert_eq "$NNODES" 2 "spark-$n's NNODES"
        RANK[$n]=$NODE_RANK
done
assert_eq "${RANK[a]} ${RANK[b]}" "0 1" "ranks"
out=$(sparkc_of spark-b hostfile 2>"$TEST_TMP/err")
cat "$TEST_TMP/err"
assert_eq "$out" "$(printf '10.77.0.2 slots=1\n10.77.0.1 slots=1')" "hostfile on spark-b"
assert_contains "$(cat "$TEST_TMP/err")" "job plan" "the digest on stderr"
pass
