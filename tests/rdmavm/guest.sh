#!/bin/sh
# Runs inside the rdma-vm guest as the child of its init, with /mnt the host's 9p share: the build
# under test in /mnt/build, results written to /mnt/out. Two "nodes" A and B in one network
# namespace, each with two rails: veth pairs a0-b0 (10.0.0.0/24) and a1-b1 (10.0.1.0/24), a
# soft-RoCE device over each end (rxe_a0 ... rxe_b1). Exit 0 when every check passed.
set -eu
share=/mnt
out=$share/out
opt=/opt/sparkd
phases=$(cat "$share/phases")
. "$share/settings"

fail() { echo "FAIL: $*"; exit 1; }
step() { echo "--- $(date -u +%T) $*"; }

step "the build under test"
mkdir -p $opt
cp -a "$share/build/." $opt/
export PATH=$opt:$PATH
missing=$(ldd $opt/sparkd $opt/sparkc $opt/sparkd-probe-rdma | grep 'not found' || true)
[ -z "$missing" ] || fail "libraries missing in the guest's image: $missing"

step "soft-RoCE over two veth pairs"
modprobe rdma_rxe
for i in 0 1; do
        ip link add a$i mtu 9000 type veth peer name b$i mtu 9000
        ip addr add 10.0.$i.1/24 dev a$i
        ip addr add 10.0.$i.2/24 dev b$i
        ip link set a$i up
        ip link set b$i up
done
ip link set lo up
# Both ends are in this one namespace: the kernel would deliver to its own address over lo, where
# rxe's UDP never reaches the peer device. Each end's traffic goes out of its own veth instead:
# a table per interface chosen by the outgoing interface, the local table after those, the
# peers' MACs permanent (ARP replies to an address of this host are not accepted otherwise).
for x in all default; do
        sysctl -qw net.ipv4.conf.$x.accept_local=1 net.ipv4.conf.$x.rp_filter=0
done
table=10
for i in 0 1; do
        for pair in "a$i b$i 1 2" "b$i a$i 2 1"; do
                set -- $pair
                sysctl -qw net.ipv4.conf.$1.accept_local=1 net.ipv4.conf.$1.rp_filter=0
                ip neigh replace 10.0.$i.$4 lladdr "$(cat /sys/class/net/$2/address)" dev $1 nud permanent
                ip route add 10.0.$i.$4 dev $1 src 10.0.$i.$3 table $table
                ip rule add pref $table oif $1 lookup $table
                table=$((table + 1))
        done
done
ip rule add pref 100 lookup local
ip rule del pref 0
for n in a0 a1 b0 b1; do
        rdma link add rxe_$n type rxe netdev $n
done
# rxe's ports go ACTIVE as their netdevs are up, and the GID of the address is added when the
# device is made (the address came first).
for _ in $(seq 100); do
        active=$(rdma link show | grep -c 'state ACTIVE' || true)
        [ "$active" = 4 ] && break
        sleep 0.1
done
rdma link show
[ "$active" = 4 ] || fail "$active of 4 rxe ports ACTIVE"

# sparkd_up NAME CONFIG_LINES: a daemon of that name in the background, its socket /run/NAME.sock,
# its log $out/NAME.log; returns once it answers.
sparkd_up() {
        name=$1
        printf '[daemon]\nnode_name = %s\n[peers]\nmdns = false\n[probe]\nhelper_dir = %s\ninterval = 0\n%b' \
                "$name" "$opt" "$2" >/tmp/$name.conf
        sparkd --foreground --log-target=stderr --config /tmp/$name.conf --socket /run/$name.sock \
                --state-dir /tmp/$name.state >"$out/$name.log" 2>&1 &
        for _ in $(seq 100); do
                sparkc --socket /run/$name.sock status >/dev/null 2>&1 && return 0
                sleep 0.1
        done
        fail "sparkd $name does not answer; its log: $(tail -n 20 "$out/$name.log")"
}

for phase in $phases; do
        step "phase $phase"
        . "$share/phase_$phase.sh"
done
echo "PASS: $phases"
