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
# veth_routes I: pair I's neighbours and routes, again after a link went down (the kernel drops
# a netdev's routes and permanent neighbours when it is set down). Table 10+2I for aI, 11+2I for bI.
veth_routes() {
        table=$((10 + 2 * $1))
        for pair in "a$1 b$1 1 2" "b$1 a$1 2 1"; do
                set -- $pair
                i=${1#?}
                ip neigh replace 10.0.$i.$4 lladdr "$(cat /sys/class/net/$2/address)" dev $1 nud permanent
                ip route replace 10.0.$i.$4 dev $1 src 10.0.$i.$3 table $table
                table=$((table + 1))
        done
}
for i in 0 1; do
        for n in a$i b$i; do
                sysctl -qw net.ipv4.conf.$n.accept_local=1 net.ipv4.conf.$n.rp_filter=0
        done
        ip rule add pref $((10 + 2 * i)) oif a$i lookup $((10 + 2 * i))
        ip rule add pref $((11 + 2 * i)) oif b$i lookup $((11 + 2 * i))
        veth_routes $i
done
ip rule add pref 100 lookup local
ip rule del pref 0
for n in a0 a1 b0 b1; do
        rdma link add rxe_$n type rxe netdev $n
done
# rxe_active N: waits until N rxe ports are ACTIVE (rxe follows its netdev's state).
rxe_active() {
        for _ in $(seq 100); do
                active=$(rdma link show | grep -c 'state ACTIVE' || true)
                [ "$active" = "$1" ] && return 0
                sleep 0.1
        done
        rdma link show
        fail "$active of $1 rxe ports ACTIVE"
}
rxe_active 4
rdma link show

# wait_line FILE PATTERN: waits until a helper's output shows PATTERN (a server listening, a
# client connected).
wait_line() {
        for _ in $(seq 300); do
                grep -q "$2" "$1" 2>/dev/null && return 0
                sleep 0.1
        done
        fail "no \"$2\" in $1: $(cat "$1")"
}

# sparkd_up NAME CONFIG_LINES [WRAPPER...]: a daemon of that name in the background (run by
# WRAPPER when given), its socket /run/NAME.sock, its log $out/NAME.log; returns once it answers.
sparkd_up() {
        name=$1
        printf '[daemon]\nnode_name = %s\n[peers]\nmdns = false\n[probe]\nhelper_dir = %s\ninterval = 0\n%b' \
                "$name" "$opt" "$2" >/tmp/$name.conf
        shift 2
        "$@" $opt/sparkd --foreground --log-target=stderr --config /tmp/$name.conf --socket /run/$name.sock \
                --state-dir /tmp/$name.state >"$out/$name.log" 2>&1 &
        echo $! >/tmp/$name.pid
        for _ in $(seq 100); do
                sparkc --socket /run/$name.sock status >/dev/null 2>&1 && return 0
                sleep 0.1
        done
        fail "sparkd $name does not answer; its log: $(tail -n 20 "$out/$name.log")"
}

# sparkd_down NAME: stops that daemon and waits for it.
sparkd_down() {
        pid=$(cat /tmp/$1.pid)
        kill -TERM "$pid"
        wait "$pid" || fail "sparkd $1 did not stop cleanly; its log: $(tail -n 20 "$out/$1.log")"
}

for phase in $phases; do
        step "phase $phase"
        . "$share/phase_$phase.sh"
done
echo "PASS: $phases"
