#!/usr/bin/env bash
# The README's cluster walkthroughs, as written, on the cluster harness: "Four Sparks in a ring"
# (SHAPE ring4) and "Eight Sparks on a switch" (switch8). Every command of the walkthrough in a
# block marked <!-- e2e-cluster: SHAPE WHERE --> (tests/package/readme_blocks.py takes them out of
# README.md) runs in order where it says (all: every node; sparkN: that node), each in a fresh
# bash, and must exit 0 (the doctor too, but for memlock: see below).
#
# What stands in for a Spark, and why:
# - The Sparks and the cables: the cluster harness's nodes spark1..sparkN (their host names, in a
#   UTS namespace of each command's own) with a Spark's four netdevs, cabled as the walkthrough
#   says; the harness's addresses are taken off before the walkthrough's step 1 gives them.
# - /etc/netplan: a folder of the node's own bound there (a mount namespace per command).
# - `netplan apply`: netplan_standin.py (the real `netplan generate` must accept the files, then
#   their addresses and MTUs set with ip(8)); no systemd-networkd runs in a namespace.
# - sudo: the test runs as root; `sudo CMD` is CMD. sparkc: the node's daemon's socket.
# - Step 2 (the package, lldpd, the key): the harness's sparkd and lldpd on every node, one key,
#   peers listed (static: the harness has no mDNS), started after step 1 as the package would be.
# Before the first sparkc command, the test waits for every map to be the shape laid and every
# doctor to pass, as a reader who looks once the cluster has settled.
#
# usage: test_readme_clusters.sh ring4|switch8
. "$(dirname "$0")/lib.sh"
. "$TESTS_DIR/lib_peers.sh"
. "$TESTS_DIR/lib_lldp.sh"
. "$TESTS_DIR/lib_cluster.sh"

shape=${1:?usage: test_readme_clusters.sh ring4|switch8}
real_netplan=$(command -v netplan) || skip "needs netplan (Debian: netplan.io): the walkthroughs' netplan step"
[ -d /etc/netplan ] || skip "needs /etc/netplan to bind a node's own folder on (Debian: netplan.io)"
python3 -c 'import yaml' 2>/dev/null || skip "needs PyYAML (Debian: python3-yaml)"

cmds=$TEST_TMP/readme
python3 "$TESTS_DIR/../package/readme_blocks.py" "$TESTS_DIR/../../README.md" "$cmds" "$shape" >/dev/null ||
        fail "no commands marked e2e-cluster for $shape in README.md (above)"

step "the harness: $shape, addresses taken off"
case $shape in
ring4)
        cluster_ring 4 spark
        ;;
switch8)
        cluster_switch tor1
        for i in 1 2 3 4 5 6 7 8; do
                cluster_node "spark$i"
                cluster_plug "spark$i" 0 tor1
        done
        ;;
*) fail "shape $shape: expected ring4 or switch8" ;;
esac
for node in "${CL_NODES[@]}"; do
        for port in $(cluster_ports "$node"); do
                for dev in $(cluster_netdevs "$node" "$port"); do
                        ip -n "${CL_NS[$node]}" -4 addr flush dev "$dev" 2>/dev/null || true
                done
        done
        mkdir -p "$TEST_TMP/$node.netplan"
done

mkdir -p "$TEST_TMP/bin"
printf '#!/bin/sh\nexec "$@"\n' >"$TEST_TMP/bin/sudo"
printf '#!/bin/sh\nexec "%s" --socket "$SPARKD_NODE_SOCKET" "$@"\n' "$SPARKC" >"$TEST_TMP/bin/sparkc"
printf '#!/bin/sh\nexec python3 "%s" "%s" "$@"\n' "$TESTS_DIR/netplan_standin.py" "$real_netplan" >"$TEST_TMP/bin/netplan"
chmod 755 "$TEST_TMP/bin"/*

# run_on NODE FILE: the command in FILE on NODE, as the header says; its output, and its status.
run_on() {
        ip netns exec "${CL_NS[$1]}" unshare --mount --uts --propagation private bash -c '
                mount --bind "$1" /etc/netplan && hostname "$2" &&
                        PATH=$3:$PATH SPARKD_NODE_SOCKET=$4 exec bash -c "$(cat "$5")"' \
                run_on "$TEST_TMP/$1.netplan" "$1" "$TEST_TMP/bin" "$(sock_of "$1")" "$2"
}

settled() {
        local node
        # shellcheck disable=SC2068
        case $shape in
        ring4) cluster_wait_map ring 60 ${CL_NODES[@]} ;;
        switch8) cluster_wait_map switch 60 ${CL_NODES[@]} ;;
        esac
        for node in "${CL_NODES[@]}"; do
                cluster_wait 30 cluster_doctor_passes "$node" ||
                        fail "$node's doctor fails: $(cluster_doctor_failures "$node")"
        done
}

is_started=
declare -A said=()
for f in "$cmds"/*.sh; do
        where=${f%.sh}
        where=${where##*.}
        cmd=$(cat "$f")
        if [ -z "$is_started" ] && [[ $cmd == sparkc\ * || $cmd == *\ sparkc\ * ]]; then
                step "sparkd and lldpd on every node (the walkthrough's step 2), settled"
                start=$(date +%s%N)
                cluster_start
                settled
                echo "settled $((($(date +%s%N) - start) / 1000000)) ms after the start"
                is_started=1
        fi
        if [ "$where" = all ]; then nodes=("${CL_NODES[@]}"); else nodes=("$where"); fi
        for node in "${nodes[@]}"; do
                [ -n "${CL_NS[$node]:-}" ] || fail "README.md runs a command on $node, which $shape has not"
                step "$node\$ $(head -n 1 "$f" | cut -c1-100)"
                rc=0
                out=$(run_on "$node" "$f" 2>&1 </dev/null) || rc=$?
                [ -z "$out" ] || sed 's/^/    /' <<<"$out"
                # The doctor warns of memlock where the test could not lift its own limit
                # (cluster_start): exit 1 then, if that is its only check not ok.
                [ "$rc" = 0 ] || { [ "$rc" = 1 ] && [[ $cmd == "sparkc doctor"* ]] && [ "$CL_MEMLOCK_LIMITED" = 1 ] &&
                        cluster_doctor_clean "$node"; } ||
                        fail "on $node, the README's \"$(head -n 1 "$f" | cut -c1-100)\" exited $rc"
                said[$node:$(head -n 1 "$f" | sed 's/ *#.*//')]=$out
        done
done
[ -n "$is_started" ] || fail "README.md's $shape walkthrough runs no sparkc command"

step "what the walkthrough left"
case $shape in
ring4)
        assert_contains "${said[spark1:sparkc topology]-}" "shape ring, 4 nodes, 4 links" "spark1's sparkc topology"
        cluster_wait_map ring 10 "${CL_NODES[@]}"
        ;;
switch8)
        assert_contains "${said[spark1:sparkc topology]-}" "shape switch, 8 nodes, 8 links" "spark1's sparkc topology"
        assert_eq "$(grep -c '^10\.2[01]\.1\.[1-8] slots=1$' <<<"${said[spark1:sparkc hostfile]-}")" 8 "spark1's hostfile lines"
        cluster_wait_map switch 10 "${CL_NODES[@]}"
        ;;
esac
pass
