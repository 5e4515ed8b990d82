#!/usr/bin/env bash
# End to end with systemd as PID 1: two Debian bookworm machines (systemd-nspawn, booted) on one
# cable install the package built from this tree and follow the README's install section: apt
# install (which makes a cluster key), one node's key copied to the other, a drop-in naming the
# fabric port and the other node, systemctl enable --now, sparkc status / peers / probe --kind
# tcp. Then: a link flapped from outside gives the link-flapping alert in the journal, systemctl
# reload keeps the daemon, the watchdog restarts a hung daemon (SIGSTOP), and systemctl stop
# leaves no process.
#
# The cable: each machine's fab0 is one end of a veth whose other end is a port of a bridge in a
# network namespace of this test, so nothing leaves the host and the link can be flapped from the
# outside, as unplugging a cable from the switch would.
#
# The debootstrapped tree is cached (SPARKD_E2E_CACHE, default /var/cache/sparkd-tests) with a
# stamp; only its first build, and a change in the package's dependencies, need the Debian mirror.
# Both machines boot from it read-only (--volatile=overlay), each with its own hostname and a
# machine-id made at boot.
#
# usage: test_e2e_nspawn.sh [SOURCE_ROOT]
# env:   SPARKD_E2E_CACHE  where the tree is kept
#        SPARKD_E2E_DEB    use this sparkd_*.deb instead of building one
#        KEEP_TEST_TMP=1   keep the work directory (logs, the .deb)
# exit:  0 pass, 1 fail, 77 skip (not root, no systemd-nspawn, no tree and no way to make one)
set -euo pipefail

src=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cache=${SPARKD_E2E_CACHE:-/var/cache/sparkd-tests}
tree=$cache/bookworm-TREE
stamp=$tree.stamp
suite=bookworm
# What the machines need besides the package's own dependencies: systemd as init, and Avahi as
# the package recommends (installing it later would need the mirror on every run).
base_packages=systemd,systemd-sysv,dbus,iproute2,procps,avahi-daemon

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
step() { echo "--- $(date -u +%T) $*"; }
ok() { echo "ok:   $*"; }

[ "$(id -u)" = 0 ] || skip "needs root (systemd-nspawn, network namespaces)"
for tool in systemd-nspawn nsenter ip flock python3; do
        command -v "$tool" >/dev/null || skip "$tool not found (Debian: systemd-container, util-linux, iproute2, python3)"
done
if [ -z "${SPARKD_E2E_DEB:-}" ] && ! command -v dpkg-buildpackage >/dev/null; then
        skip "dpkg-buildpackage not found (Debian: dpkg-dev, debhelper) and no SPARKD_E2E_DEB"
fi

tmp=$(mktemp -d /tmp/sparkd-e2e.XXXXXX)
chmod 755 "$tmp"
ns_a=sparkd-e2e-$$-a
ns_b=sparkd-e2e-$$-b
ns_sw=sparkd-e2e-$$-sw
declare -A nspawn_pid=() leader=()

machine_logs() {
        local m
        for m in "${!leader[@]}"; do
                [ -n "${leader[$m]}" ] || continue
                echo "--- journal of $m: sparkd (last 60 lines)"
                on "$m" journalctl --no-pager -n 60 -u sparkd -u sparkd.socket 2>&1 || true
                echo "--- journal of $m: systemd and the kernel (last 20 lines)"
                on "$m" journalctl --no-pager -n 20 _PID=1 + SYSLOG_IDENTIFIER=kernel 2>&1 || true
        done
        for m in a b; do
                [ -f "$tmp/$m.console" ] || continue
                echo "--- console of $m (last 20 lines)"
                tail -n 20 "$tmp/$m.console"
        done
}

cleanup() {
        local rc=$? m
        trap - EXIT
        [ "$rc" = 0 ] || [ "$rc" = 77 ] || machine_logs
        # nspawn shuts a booted container down cleanly on SIGTERM.
        for m in "${!nspawn_pid[@]}"; do kill -TERM "${nspawn_pid[$m]}" 2>/dev/null || true; done
        for m in "${!nspawn_pid[@]}"; do
                for _ in $(seq 150); do kill -0 "${nspawn_pid[$m]}" 2>/dev/null || break; sleep 0.1; done
                kill -KILL "${nspawn_pid[$m]}" 2>/dev/null || true
                wait "${nspawn_pid[$m]}" 2>/dev/null || true
        done
        for ns in "$ns_a" "$ns_b" "$ns_sw"; do ip netns del "$ns" 2>/dev/null || true; done
        if [ -n "${KEEP_TEST_TMP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
        exit "$rc"
}
trap cleanup EXIT

# on MACHINE CMD...: runs CMD inside the booted machine (all its namespaces, a clean environment).
on() {
        local m=$1
        shift
        nsenter -t "${leader[$m]}" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
}

# wait_for SECONDS CMD...: until CMD succeeds, polled every 0.2 s; bounded by the clock.
wait_for() {
        local end=$(($(date +%s) + $1))
        shift
        while [ "$(date +%s)" -lt "$end" ]; do
                "$@" >/dev/null 2>&1 && return 0
                sleep 0.2
        done
        "$@" >/dev/null 2>&1
}

# --- the package -----------------------------------------------------------------------------
if [ -n "${SPARKD_E2E_DEB:-}" ]; then
        [ -f "$SPARKD_E2E_DEB" ] || fail "SPARKD_E2E_DEB=$SPARKD_E2E_DEB is no file"
        mkdir "$tmp/deb"
        cp "$SPARKD_E2E_DEB" "$tmp/deb/"
else
        step "dpkg-buildpackage -us -uc -b (log: build.log, shown on failure)"
        # As tests/package/test_deb_build.sh: a clean copy, so no developer build tree is used.
        mkdir -p "$tmp/deb/sparkd"
        tar -C "$src" --exclude=./.git --exclude='./build*' --exclude='./obj-*' -cf - . |
                tar -C "$tmp/deb/sparkd" -xf -
        if ! (cd "$tmp/deb/sparkd" && nice dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1; then
                tail -n 60 "$tmp/build.log"
                fail "dpkg-buildpackage failed (last 60 lines above)"
        fi
        rm -rf "$tmp/deb/sparkd" "$tmp"/deb/*dbgsym*
fi
debs=("$tmp"/deb/sparkd_*.deb)
[ -f "${debs[0]}" ] || fail "no sparkd_*.deb in $tmp/deb"
deb=$(basename "${debs[0]}")
chmod -R a+rX "$tmp/deb"
ok "package $deb"

# --- the cached tree -------------------------------------------------------------------------
# Several runs may share the cache: one prepares it under an exclusive lock, all boot from it
# under a shared one.
mkdir -p "$cache"
exec 9>"$tree.lock"
flock -x 9
want_base="debootstrap --variant=minbase --include=$base_packages $suite"
if [ ! -d "$tree" ] || [ "$(sed -n 1p "$stamp" 2>/dev/null)" != "$want_base" ]; then
        command -v debootstrap >/dev/null || skip "no cached tree in $tree and no debootstrap to make one (Debian: debootstrap)"
        step "$want_base $tree (first run; needs the Debian mirror)"
        rm -rf "$tree" "$tree.new" "$stamp"
        mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
        # shellcheck disable=SC2086
        if ! nice debootstrap --variant=minbase --include="$base_packages" "$suite" "$tree.new" $mirror \
                >"$tmp/debootstrap.log" 2>&1; then
                tail -n 20 "$tmp/debootstrap.log"
                rm -rf "$tree.new"
                skip "debootstrap of $suite failed (no access to the Debian mirror?), last lines above"
        fi
        # debootstrap copies the host's name and a fixed machine-id: without them each machine
        # takes its -M name as host name and makes a fresh machine-id at boot.
        rm -f "$tree.new/etc/hostname"
        : >"$tree.new/etc/machine-id"
        ln -sf /etc/machine-id "$tree.new/var/lib/dbus/machine-id"
        rm -rf "$tree.new"/var/cache/apt/archives/*.deb
        mv "$tree.new" "$tree"
        echo "$want_base" >"$stamp"
fi
want_deps="$(dpkg-deb -f "${debs[0]}" Depends), $(dpkg-deb -f "${debs[0]}" Recommends)"
if [ "$(sed -n 2p "$stamp")" != "$want_deps" ]; then
        step "installing the package's dependencies into the tree (needs the Debian mirror)"
        if ! systemd-nspawn -q -D "$tree" --register=no --keep-unit \
                env DEBIAN_FRONTEND=noninteractive sh -c \
                'apt-get update -qq && apt-get satisfy -y -qq --no-install-recommends "$1" && apt-get clean' \
                sh "$want_deps" >"$tmp/deps.log" 2>&1; then
                tail -n 20 "$tmp/deps.log"
                skip "could not install the package's dependencies into $tree (no access to the Debian mirror?)"
        fi
        printf '%s\n%s\n' "$want_base" "$want_deps" >"$stamp"
fi
flock -s 9
ok "tree $tree"

# --- the cable -------------------------------------------------------------------------------
step "two machines on one bridge"
for ns in "$ns_a" "$ns_b" "$ns_sw"; do
        ip netns add "$ns"
        ip -n "$ns" link set lo up
done
ip -n "$ns_sw" link add sw type bridge forward_delay 0
ip link add fab0 netns "$ns_a" mtu 9000 type veth peer name port-a netns "$ns_sw" mtu 9000
ip link add fab0 netns "$ns_b" mtu 9000 type veth peer name port-b netns "$ns_sw" mtu 9000
for port in port-a port-b; do ip -n "$ns_sw" link set "$port" master sw up; done
ip -n "$ns_sw" link set sw up
ip -n "$ns_a" addr add 10.99.0.1/24 dev fab0
ip -n "$ns_b" addr add 10.99.0.2/24 dev fab0
ip -n "$ns_a" link set fab0 up
ip -n "$ns_b" link set fab0 up
declare -A addr_of=([a]=10.99.0.1 [b]=10.99.0.2) name_of=([a]=spark1 [b]=spark2) other=([a]=b [b]=a)

# --- boot ------------------------------------------------------------------------------------
boot() {        # boot a|b NETNS
        local m=$1 ns=$2 t0
        t0=$(date +%s%N)
        # --private-network with an existing namespace: services inside get CAP_NET_ADMIN.
        systemd-nspawn -q -D "$tree" --volatile=overlay -b --register=no --keep-unit \
                -M "${name_of[$m]}" --network-namespace-path="/run/netns/$ns" --private-network \
                --bind-ro="$tmp/deb:/srv/sparkd" --console=read-only >"$tmp/$m.console" 2>&1 &
        nspawn_pid[$m]=$!
        for _ in $(seq 300); do
                # nspawn's first child only sets up and exits; the leader is the one running systemd.
                leader[$m]=$(ps -o pid=,comm= --ppid "${nspawn_pid[$m]}" | awk '$2 == "systemd" { print $1; exit }' || true)
                [ -n "${leader[$m]}" ] && break
                kill -0 "${nspawn_pid[$m]}" 2>/dev/null || { unset "leader[$m]"; fail "systemd-nspawn for $m exited"; }
                sleep 0.1
        done
        [ -n "${leader[$m]}" ] || fail "machine $m has no init process after 30 s"
        local state=
        for _ in $(seq 150); do
                state=$(on "$m" systemctl is-system-running 2>/dev/null) || true
                case $state in running | degraded) break ;; esac
                sleep 0.2
        done
        case $state in
        running) ;;
        degraded) on "$m" systemctl --failed --no-legend; fail "machine $m booted degraded" ;;
        *) fail "machine $m not booted after 30 s (state: ${state:-none})" ;;
        esac
        ok "${name_of[$m]} booted in $((($(date +%s%N) - t0) / 1000000)) ms"
}
step "boot"
boot a "$ns_a"
boot b "$ns_b"
[ "$(on a cat /etc/machine-id)" != "$(on b cat /etc/machine-id)" ] || fail "both machines have one machine-id"
assert_hostname() { [ "$(on "$1" hostname)" = "${name_of[$1]}" ] || fail "machine $1 is called $(on "$1" hostname)"; }
assert_hostname a
assert_hostname b

# --- the README's install section ------------------------------------------------------------
step "apt install ./$deb"
for m in a b; do
        on "$m" env DEBIAN_FRONTEND=noninteractive sh -c 'cd /srv/sparkd && apt-get install -y ./sparkd_*.deb' \
                >"$tmp/$m.apt.log" 2>&1 || { tail -n 30 "$tmp/$m.apt.log"; fail "apt-get install on $m"; }
        ok "installed on $m"
done

step "the key the package made on a, copied to b"
for m in a b; do
        [ "$(on "$m" stat -c '%U:%G %a' /etc/sparkd/cluster.key 2>&1)" = "sparkd:sparkd 600" ] ||
                fail "the package made no sparkd-owned, mode 600 key on $m: $(on "$m" ls -l /etc/sparkd 2>&1)"
done
! on a sparkc keygen >/dev/null 2>&1 || fail "sparkc keygen replaced the package's key without --force"
on a cat /etc/sparkd/cluster.key |
        on b install -m 600 -o sparkd -g sparkd /dev/stdin /etc/sparkd/cluster.key || fail "copying the key to b"
[ "$(on a sha256sum </dev/null /etc/sparkd/cluster.key | cut -d' ' -f1)" = \
  "$(on b sha256sum /etc/sparkd/cluster.key | cut -d' ' -f1)" ] || fail "the keys differ"

step "a key user sparkd cannot read: the daemon says which user must own it"
# As after a copy made with plain cp as root.
on b chown root:root /etc/sparkd/cluster.key
on b systemctl reload sparkd || fail "systemctl reload sparkd on b"
says_chown() {
        on b journalctl -u sparkd --no-pager -o cat |
                grep -qF "this daemon runs as user sparkd: chown sparkd /etc/sparkd/cluster.key"
}
wait_for 10 says_chown || fail "no chown advice for a key sparkd cannot read: $(on b journalctl -u sparkd -n 5)"
on b chown sparkd:sparkd /etc/sparkd/cluster.key

step "a drop-in with the fabric port and the other node, systemctl enable --now, reload"
for m in a b; do
        printf "[fabric]\ninterfaces = fab0\n[peers]\nstatic = %s\n" "${addr_of[${other[$m]}]}" |
                on "$m" tee /etc/sparkd/sparkd.conf.d/50-cluster.conf >/dev/null
        on "$m" systemctl enable --now sparkd >/dev/null 2>&1 || fail "systemctl enable --now sparkd on $m"
        on "$m" systemctl reload sparkd || fail "systemctl reload sparkd on $m"
done

step "ready: systemctl is-active, sparkc status"
for m in a b; do
        wait_for 20 on "$m" systemctl is-active --quiet sparkd || fail "sparkd not active on $m"
        status=$(on "$m" sparkc status) || fail "sparkc status on $m: $status"
        grep -q "${name_of[$m]}" <<<"$status" || fail "sparkc status on $m does not name ${name_of[$m]}: $status"
        ok "$m: $(head -n 1 <<<"$status")"
done

# peer_field MACHINE PEER_NAME FIELD: what MACHINE's daemon says of the peer of that name.
peer_field() {
        on "$1" sparkc --json peers 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(next((p.get(sys.argv[2]) for p in d["peers"] if p.get("name") == sys.argv[1]), "none"))' "$2" "$3"
}
peer_up() { [ "$(peer_field "$1" "$2" state)" = up ]; }
peer_discovered() { [ "$(peer_field "$1" "$2" discovered)" = True ]; }

step "sparkc peers shows the other"
for m in a b; do
        o=${other[$m]}
        wait_for 30 peer_up "$m" "${name_of[$o]}" ||
                fail "$m does not see ${name_of[$o]} up: $(on "$m" sparkc peers 2>&1)"
        peers=$(on "$m" sparkc peers)
        grep -q "${name_of[$o]}" <<<"$peers" || fail "sparkc peers on $m: $peers"
        ok "$m sees ${name_of[$o]} up"
done
echo "$peers" | sed 's/^/    /'
# The static address made the connection; Avahi in the machines must find the peer as well.
for m in a b; do
        o=${other[$m]}
        wait_for 15 peer_discovered "$m" "${name_of[$o]}" ||
                fail "$m did not find ${name_of[$o]} over mDNS: $(on "$m" sparkc --json peers 2>&1)"
done
ok "each found the other over mDNS too"

step "sparkc probe --peer spark2 --kind tcp"
# The schedule's first round starts as soon as the peers are up (past its jitter into the hour),
# and whichever node starts it holds the bandwidth slot for its 5 s probe; when that is spark2,
# spark2 refuses spark1's probe as busy. So a refusal for busy is tried again, for 60 s.
end=$(($(date +%s) + 60))
while ! probe=$(on a sparkc probe --peer spark2 --kind tcp 2>&1); do
        grep -q "busy:" <<<"$probe" && [ "$(date +%s)" -lt "$end" ] || fail "probe failed: $probe"
        echo "    busy, again in 2 s: $(grep -o 'busy:.*' <<<"$probe")"
        sleep 2
done
echo "$probe" | sed 's/^/    /'
grep -qi "gb/s" <<<"$probe" || fail "the probe's output has no Gb/s: $probe"

# --- link flapping ---------------------------------------------------------------------------
step "flap a's link from the switch side, 3 times"
# Carrier events closer than ~1 s are merged by the kernel: space the toggles.
for _ in 1 2 3; do
        ip -n "$ns_sw" link set port-a down
        sleep 1.2
        ip -n "$ns_sw" link set port-a up
        sleep 1.2
done
flapping() { on a journalctl -u sparkd --no-pager -o cat SPARKD_EVENT=link-flapping | grep -q .; }
wait_for 15 flapping || fail "no link-flapping in the journal of a: $(on a journalctl -u sparkd --no-pager -n 20)"
on a journalctl -u sparkd --no-pager SPARKD_EVENT=link-flapping | sed 's/^/    /'
iface=$(on a journalctl -u sparkd --no-pager -o json SPARKD_EVENT=link-flapping | head -n 1 |
        python3 -c 'import json, sys; print(json.loads(sys.stdin.readline()).get("SPARKD_IFACE"))')
[ "$iface" = fab0 ] || fail "link-flapping names SPARKD_IFACE=$iface, not fab0"
wait_for 30 peer_up a spark2 || fail "a does not see spark2 up again after the flaps"

# --- reload ----------------------------------------------------------------------------------
main_pid() { on "$1" systemctl show -p MainPID --value sparkd; }
step "systemctl reload sparkd"
pid=$(main_pid a)
on a systemctl reload sparkd || fail "systemctl reload sparkd"
on a systemctl is-active --quiet sparkd || fail "sparkd not active after reload"
[ "$(main_pid a)" = "$pid" ] || fail "reload changed the main PID ($pid -> $(main_pid a))"
on a sparkc status >/dev/null || fail "sparkc status after reload"
ok "reloaded, still PID $pid"

# --- watchdog --------------------------------------------------------------------------------
watchdog_s=$(($(on a systemctl show -p WatchdogUSec --value sparkd | sed 's/s$//; s/min/*60+/; s/+$//') + 0))
step "SIGSTOP sparkd (PID $pid), the watchdog (${watchdog_s}s) must restart it"
[ "$watchdog_s" -gt 0 ] || fail "sparkd.service has no watchdog"
restarts=$(on a systemctl show -p NRestarts --value sparkd)
t0=$(date +%s)
on a kill -STOP "$pid"
new_pid_answering() {
        local p
        p=$(main_pid a)
        [ "$p" != 0 ] && [ "$p" != "$pid" ] && on a systemctl is-active --quiet sparkd && on a sparkc status
}
wait_for $((watchdog_s + 30)) new_pid_answering ||
        fail "no new sparkd answering $((watchdog_s + 30)) s after SIGSTOP (MainPID $(main_pid a))"
took=$(($(date +%s) - t0))
[ "$(on a systemctl show -p NRestarts --value sparkd)" -gt "$restarts" ] || fail "NRestarts did not grow"
# The watchdog counts from the daemon's last keep-alive before the stop, so the restart comes
# between half of WatchdogSec and all of it after SIGSTOP; what matters is that the watchdog
# was the reason.
journal=$(on a journalctl -u sparkd --no-pager -o cat --since "@$t0")
grep -q "Watchdog timeout" <<<"$journal" || fail "no watchdog timeout in the journal: $journal"
grep -q "Failed with result 'watchdog'" <<<"$journal" || fail "the stop was not the watchdog's: $journal"
ok "new MainPID $(main_pid a) answering $took s after SIGSTOP"
wait_for 30 peer_up a spark2 || fail "the restarted daemon on a does not see spark2 up"

# --- stop ------------------------------------------------------------------------------------
step "systemctl stop sparkd leaves no process"
for m in a b; do
        on "$m" systemctl stop sparkd 2>/dev/null || fail "systemctl stop sparkd on $m"
        left=$(on "$m" ps -e -o pid=,user=,args= | awk '$2 == "sparkd" || $3 ~ /sparkd/' || true)
        [ -z "$left" ] || fail "processes left on $m after stop: $left"
        [ "$(main_pid "$m")" = 0 ] || fail "MainPID on $m is $(main_pid "$m") after stop"
done
ok "no sparkd process on either machine"

echo "PASS: two booted machines install, peer, probe, alert, reload, restart and stop sparkd"
exit 0
