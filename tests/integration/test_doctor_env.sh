#!/usr/bin/env bash
# On this machine (no RDMA device, no GPU) `sparkc doctor` reports the failures with their fixes
# and exits 2, and `sparkc env` says no fabric was found instead of printing wrong values. With
# the host root pointed at a fixture Spark and a namespace holding its addresses, the daemon
# serves the NCCL environment of that Spark; pointed at a fixture whose fabric netdev has no
# address, it pins the socket variables to the management NIC by the address netlink shows.
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
fixture_host spark-twins "$TEST_TMP/spark-twins"
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
# DMA-BUF is impossible on this fixture: dmabuf is refused, and printed only when forced.
rc=0; out=$(sparkc_of b env --format docker --mode dmabuf 2>"$TEST_TMP/env.err") || rc=$?
assert_eq "$rc" 1 "exit status of dmabuf where DMA-BUF is impossible"
assert_eq "$out" "" "stdout of a refused mode"
assert_contains "$(cat "$TEST_TMP/env.err")" "use \`sparkc env --mode safe\`" "the safe command"
out=$(sparkc_of b env --format docker --mode dmabuf --force 2>"$TEST_TMP/env.err")
assert_contains "$out" "NCCL_DMABUF_ENABLE=1" "docker format, dmabuf forced"
assert_contains "$out" "asked for, but" "dmabuf forced on a host that cannot"
assert_contains "$(head -n 1 "$TEST_TMP/env.err")" "sparkc: warning: forced mode dmabuf" "the warning line"
rc=0; sparkc_of b env --mode turbo >/dev/null 2>&1 || rc=$?
assert_eq "$rc" 1 "bad --mode"
out=$(sparkc_of b fabric)
assert_contains "$out" "rocep1s0f1" "fabric table"

step "a fixture Spark with nvidia_peermem loaded: dmabuf would hang NCCL, so env refuses it"
fixture_host spark-rail-faults "$TEST_TMP/spark-rail-faults"
printf '[daemon]\nhost_root = %s\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' \
        "$TEST_TMP/spark-rail-faults" >"$TEST_TMP/peermem.conf"
sparkd_start peermem "$b" -c "$TEST_TMP/peermem.conf"
assert_contains "$(sparkc_of peermem doctor || true)" "NCCL init hangs forever" "the doctor's failure"
rc=0; out=$(sparkc_of peermem env --mode dmabuf 2>"$TEST_TMP/env.err") || rc=$?
assert_eq "$rc" 1 "exit status of env --mode dmabuf with peermem loaded"
assert_eq "$out" "" "nothing to eval"
assert_contains "$(cat "$TEST_TMP/env.err")" "refusing mode dmabuf: nvidia_peermem is loaded on a unified-memory GPU: NCCL init hangs forever" "the reason"
assert_contains "$(cat "$TEST_TMP/env.err")" "use \`sparkc env --mode safe\`" "the safe command"
rc=0; json=$(sparkc_of peermem env --mode dmabuf --json 2>/dev/null) || rc=$?
assert_eq "$rc" 1 "exit status of the refusal with --json"
assert_eq "$(json_get "$json" 'd["refused"]["safe_command"]')" "sparkc env --mode safe" "refused in JSON"
out=$(sparkc_of peermem env --mode dmabuf --force 2>"$TEST_TMP/env.err") || fail "env --force"
assert_contains "$out" "export NCCL_DMABUF_ENABLE='1'" "the forced variables"
assert_contains "$(head -n 1 "$TEST_TMP/env.err")" "sparkc: warning: forced mode dmabuf, which NCCL cannot run with here" "the warning line"
sparkc_of peermem env --mode safe >/dev/null || fail "safe mode with peermem loaded"
sparkd_stop peermem

step "doctor: the NetworkManager profiles of the fabric netdevs, read afresh at each request"
out=$(sparkc_of b doctor) || true
assert_contains "$out" "[ ok ] mtu-profile     no profile of a fabric netdev sets an MTU other than 9000" "doctor"
sed -i 's/^mtu=9000$/mtu=1500/' "$fixture/etc/NetworkManager/system-connections/enp1s0f1np1.nmconnection"
rc=0; out=$(sparkc_of b doctor) || rc=$?
assert_contains "$out" "[WARN] mtu-profile     1 profile will set a fabric netdev's MTU other than 9000 on reconnect" "doctor"
assert_contains "$out" "fix: nmcli connection modify enp1s0f1np1 802-3-ethernet.mtu 9000" "doctor"
[ "$rc" -ge 1 ] || fail "doctor exit status $rc with a profile that undoes the MTU"
sparkd_stop b

step "a fabric netdev without an address: env pins the management NIC, never the Wi-Fi"
c=$(netns_new c)
# Only eno1 exists here, with its address: the fixture's wlan0 and docker0 have none from
# netlink, and the management NIC's comes from the host inventory, not the fabric links.
ip -n "$c" link add eno1 type veth peer name peer0
ip -n "$c" addr add 10.1.0.5/16 dev eno1
ip -n "$c" link set eno1 up
ip -n "$c" link set peer0 up
printf '[daemon]\nhost_root = %s\n[sysctl]\nnet.core.rmem_max =\nnet.core.wmem_max =\n' \
        "$TESTS_DIR/../fixtures/hosts/mgmt-fallback" >"$TEST_TMP/c.conf"
sparkd_start c "$c" -c "$TEST_TMP/c.conf"
out=$(sparkc_of c env)
assert_contains "$out" "export NCCL_SOCKET_IFNAME='=eno1'" "env"
assert_contains "$out" "export GLOO_SOCKET_IFNAME='eno1'" "env"
assert_contains "$out" "export UCX_NET_DEVICES='mlx5_0:1,eno1'" "env"
assert_contains "$out" "wlan0 is wireless (it holds the default route)" "env"
assert_contains "$out" "docker0 is a bridge" "env"
json=$(sparkc_of c --json fabric)
assert_eq "$(json_get "$json" '[(h["kind"], [a for a in h["addresses"] if ":" not in a], h["default_route"]) for h in d["host_interfaces"] if h["name"] == "eno1"]')" \
        "[('physical', ['10.1.0.5/16'], True)]" "eno1 in the host inventory"
assert_eq "$(json_get "$json" '[h["kind"] for h in d["host_interfaces"] if h["name"] in ("wlan0", "docker0", "veth3f2a1c9", "lo")]')" \
        "['bridge', 'loopback', 'virtual', 'wireless']" "the kinds of the others"
sparkd_stop c
pass
