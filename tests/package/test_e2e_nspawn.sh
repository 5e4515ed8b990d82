#!/usr/bin/env bash
# End to end with systemd as PID 1: two Debian bookworm machines (systemd-nspawn, booted), spark1
# and spark2, on one cable follow the README's "Two Sparks from zero": every command of it in a
# block marked <!-- e2e: WHERE --> (tests/package/readme_blocks.py takes them out of README.md),
# as written, in order, where it says (build: here, on the host; spark1, spark2 or both: in the
# machines as the user "nvidia" with sudo, each command in a fresh login shell). Then: the key is
# one, the peers found each other over mDNS, the probe measured; a link flapped from outside gives
# the link-flapping alert in the journal, `sparkc topology --netplan --write` (as root: the
# packaged daemon, user sparkd under ProtectSystem=strict, only plans it) refuses the user who is
# not root, keeps an address it cannot tell idle, and, once both ends are on the plan, writes the
# file that netplan generates, systemctl reload keeps the daemon, the
# watchdog restarts a hung daemon (SIGSTOP), and systemctl stop leaves no process.
#
# What stands in for a Spark, and why:
# - The cable: each machine's enp1s0f0np0 (a Spark's netdev name) is one end of a veth whose other
#   end is a port of a bridge in a network namespace of this test, so nothing leaves the host and
#   the link can be flapped from the outside, as unplugging a cable from the switch would.
# - The playbook's netplan step: the test gives each end a 169.254.0.0/16 address, as IPv4
#   link-local addressing does, with ip(8) from outside (the machines have no netplan).
# - The ConnectX-7: a veth has no RDMA device, which is how sparkd finds a Spark's fabric ports,
#   so a drop-in names enp1s0f0np0 (/etc/sparkd/sparkd.conf.d/10-e2e-fabric.conf). With no RDMA
#   device and no GPU, `sparkc doctor` fails (exit 2 wanted here) and the probe's rdma and nccl
#   kinds are unavailable (so `--kind all` exits 0 on rtt, tcp and pathmtu).
# - DGX OS's first user: "nvidia", with sudo without a password (nothing types one here), and
#   the host's name in /etc/hosts, as an installed system has it.
# - The playbook's discover-sparks: nvidia's SSH key on spark1 authorised on spark2, and spark2's
#   host key known (what ssh-copy-id leaves), so scp from spark1 to spark2 works.
# - The build: the README's build block runs on the host in a clean copy of the tree (the
#   machines have no compilers), with sudo as itself when the host runs this as root without
#   sudo; the package then lies in spark1's home directory, where that block leaves the user.
# - The firewall step runs as written: the machines have ufw (its rules are added; ufw stays off,
#   as on a fresh DGX OS). The README's other blocks (the playbook's netplan, the first NCCL job)
#   need netplan to configure the cable, GPUs and nccl-tests that the machines do not have; they
#   are not marked. The machines have netplan.io for `netplan generate` of sparkd's file.
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
suite=bookworm
# What the machines need besides the package's own dependencies: systemd as init, Avahi as the
# package recommends (installing it later would need the mirror on every run), and what the
# README's path uses on DGX OS: sudo, SSH (scp), .local names (nss-mdns), ufw and netplan.
# A new package here makes a new tree (the tree's name is a hash of this list).
base_packages=systemd,systemd-sysv,dbus,iproute2,procps,avahi-daemon,sudo,openssh-server,openssh-client,libnss-mdns,ufw,netplan.io
# A tree per package list, so runs of other versions of this test beside this one keep theirs.
tree=$cache/$suite-$(echo "$base_packages" | sha256sum | cut -c1-12)-TREE
stamp=$tree.stamp

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
step() { echo "--- $(date -u +%T) $*"; }
ok() { echo "ok:   $*"; }

[ "$(id -u)" = 0 ] || skip "needs root (systemd-nspawn, network namespaces)"
for tool in systemd-nspawn nsenter runuser ip flock python3; do
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

# --- the README's commands ----------------------------------------------------------------
readme_cmds=$tmp/readme
python3 "$src/tests/package/readme_blocks.py" "$src/README.md" "$readme_cmds" >/dev/null ||
        fail "no commands for this test in $src/README.md (above)"
build_cmds=("$readme_cmds"/*.build.sh)
[ -f "${build_cmds[0]}" ] || fail "README.md marks no build block (<!-- e2e: build -->)"

# --- the package -----------------------------------------------------------------------------
if [ -n "${SPARKD_E2E_DEB:-}" ]; then
        [ -f "$SPARKD_E2E_DEB" ] || fail "SPARKD_E2E_DEB=$SPARKD_E2E_DEB is no file"
        mkdir "$tmp/deb"
        cp "$SPARKD_E2E_DEB" "$tmp/deb/"
else
        step "the README's build block in a clean copy (log: build.log, shown on failure)"
        sed 's/^/    /' "${build_cmds[@]}"
        # As tests/package/test_deb_build.sh: a clean copy, so no developer build tree is used.
        mkdir -p "$tmp/deb/sparkd" "$tmp/bin"
        tar -C "$src" --exclude=./.git --exclude='./build*' --exclude='./obj-*' -cf - . |
                tar -C "$tmp/deb/sparkd" -xf -
        # Root without sudo: "sudo CMD" is CMD.
        if ! command -v sudo >/dev/null; then
                printf '#!/bin/sh\nexec "$@"\n' >"$tmp/bin/sudo"
                chmod 755 "$tmp/bin/sudo"
        fi
        # Where the block ends, the package must lie.
        { cat "${build_cmds[@]}"; echo 'ls sparkd_*.deb'; } >"$tmp/build.sh"
        if ! (cd "$tmp/deb/sparkd" && PATH=$tmp/bin:$PATH nice bash -euo pipefail "$tmp/build.sh") \
                >"$tmp/build.log" 2>&1; then
                tail -n 60 "$tmp/build.log"
                fail "the README's build block failed, or left no sparkd_*.deb where it ends (last 60 lines above)"
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
# A Spark's first ConnectX-7 netdev, addressed as IPv4 link-local addressing would.
fabric=enp1s0f0np0
ip link add "$fabric" netns "$ns_a" mtu 9000 type veth peer name port-a netns "$ns_sw" mtu 9000
ip link add "$fabric" netns "$ns_b" mtu 9000 type veth peer name port-b netns "$ns_sw" mtu 9000
for port in port-a port-b; do ip -n "$ns_sw" link set "$port" master sw up; done
ip -n "$ns_sw" link set sw up
ip -n "$ns_a" addr add 169.254.17.1/16 dev "$fabric"
ip -n "$ns_b" addr add 169.254.17.2/16 dev "$fabric"
ip -n "$ns_a" link set "$fabric" up
ip -n "$ns_b" link set "$fabric" up
declare -A name_of=([a]=spark1 [b]=spark2) other=([a]=b [b]=a)

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

# --- what stands in for DGX OS and the playbook ----------------------------------------------
step "stand-ins: the fabric drop-in, the user nvidia, discover-sparks' SSH set-up"
user=nvidia
for m in a b; do
        # An installed system names itself in /etc/hosts (sudo looks itself up there).
        echo "127.0.1.1 ${name_of[$m]}" | on "$m" tee -a /etc/hosts >/dev/null
        on "$m" mkdir -p /etc/sparkd/sparkd.conf.d
        printf '[fabric]\ninterfaces = %s\n' "$fabric" |
                on "$m" tee /etc/sparkd/sparkd.conf.d/10-e2e-fabric.conf >/dev/null
        on "$m" useradd -m -s /bin/bash "$user"
        echo "$user ALL=(ALL) NOPASSWD: ALL" | on "$m" tee "/etc/sudoers.d/$user" >/dev/null
done
for m in a b; do on "$m" install -d -m 700 -o "$user" -g "$user" "/home/$user/.ssh"; done
on a runuser -u "$user" -- ssh-keygen -q -t ed25519 -N '' -f "/home/$user/.ssh/id_ed25519"
on a cat "/home/$user/.ssh/id_ed25519.pub" |
        on b install -m 600 -o "$user" -g "$user" /dev/stdin "/home/$user/.ssh/authorized_keys"
# sshd on b and b's name over mDNS, as scp from a will need them.
wait_for 20 on a sh -c 'ssh-keyscan -T 2 spark2.local 2>/dev/null | grep -q .' ||
        fail "spark1 cannot reach sshd on spark2.local: $(on a getent hosts spark2.local 2>&1)"
on a ssh-keyscan -T 2 spark2.local 2>/dev/null |
        on a runuser -u "$user" -- tee "/home/$user/.ssh/known_hosts" >/dev/null
# The build block leaves the user where the package is: spark1's home here.
on a install -m 644 -o "$user" -g "$user" "/srv/sparkd/$deb" "/home/$user/"

# settled: both daemons answer and each sees the other up, as the README's look assumes (the
# peers meet over mDNS within seconds of the key being one).
peer_field() {  # MACHINE PEER_NAME FIELD: what MACHINE's daemon says of the peer of that name
        on "$1" sparkc --json peers 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(next((p.get(sys.argv[2]) for p in d["peers"] if p.get("name") == sys.argv[1]), "none"))' "$2" "$3"
}
peer_up() { [ "$(peer_field "$1" "$2" state)" = up ]; }
peer_discovered() { [ "$(peer_field "$1" "$2" discovered)" = True ]; }
settled() {
        local m
        for m in a b; do
                wait_for 20 on "$m" systemctl is-active --quiet sparkd || fail "sparkd not active on $m"
                wait_for 30 peer_up "$m" "${name_of[${other[$m]}]}" ||
                        fail "$m does not see ${name_of[${other[$m]}]} up: $(on "$m" sparkc peers 2>&1)"
        done
}

# The exit status each command has in these machines: the doctor fails without an RDMA device
# and a GPU; everything else succeeds.
wanted_status() {
        case $1 in
        "sparkc doctor"*) echo 2 ;;
        *) echo 0 ;;
        esac
}

# --- the README's "Two Sparks from zero" -----------------------------------------------------
declare -A said=()
is_settled=
for f in "$readme_cmds"/*.sh; do
        where=${f%.sh}
        where=${where##*.}
        cmd=$(cat "$f")
        case $where in
        build) continue ;;
        spark1) machines=(a) ;;
        spark2) machines=(b) ;;
        both) machines=(a b) ;;
        esac
        if [ -z "$is_settled" ] && [[ $cmd == sparkc\ * ]]; then
                settled
                is_settled=1
        fi
        for m in "${machines[@]}"; do
                step "${name_of[$m]}\$ $(head -n 1 "$f")"
                end=$(($(date +%s) + 60))
                # A fresh login each time, so groups given by usermod count from the next command.
                while out=$(on "$m" runuser -l "$user" -c "$cmd" 2>&1 </dev/null); rc=$?
                        # The schedule's first round may hold the peer's bandwidth slot (a 5 s tcp
                        # probe): a probe refused as busy is tried again, for 60 s.
                        [ "$rc" != 0 ] && [[ $cmd == "sparkc probe"* ]] && grep -q "busy:" <<<"$out" &&
                        [ "$(date +%s)" -lt "$end" ]; do
                        echo "    busy, again in 2 s: $(grep -o 'busy:.*' <<<"$out")"
                        sleep 2
                done
                [ -z "$out" ] || sed 's/^/    /' <<<"$out"
                [ "$rc" = "$(wanted_status "$cmd")" ] ||
                        fail "on ${name_of[$m]}, the README's \"$cmd\" exited $rc, not $(wanted_status "$cmd")"
                said[$m:$(head -n 1 "$f" | sed 's/ *#.*//')]=$out
        done
done
ok "every marked command of the README ran as written"

step "what the README's path left"
for m in a b; do
        [ "$(on "$m" stat -c '%U:%G %a' /etc/sparkd/cluster.key 2>&1)" = "sparkd:sparkd 600" ] ||
                fail "no sparkd-owned, mode 600 key on $m: $(on "$m" ls -l /etc/sparkd 2>&1)"
        [ -z "$(on "$m" ls "/home/$user/cluster.key" 2>/dev/null)" ] || fail "a copy of the key left in $m's home"
        grep -q "${name_of[$m]}" <<<"${said[$m:sparkc status]-}" ||
                fail "sparkc status on $m does not name ${name_of[$m]}: ${said[$m:sparkc status]-}"
        grep -q "${name_of[${other[$m]}]}" <<<"${said[$m:sparkc peers]-}" ||
                fail "sparkc peers on $m does not show ${name_of[${other[$m]}]}: ${said[$m:sparkc peers]-}"
        # No static peer anywhere: Avahi in the machines found them.
        peer_discovered "$m" "${name_of[${other[$m]}]}" || fail "$m did not find ${name_of[${other[$m]}]} over mDNS"
done
[ "$(on a sha256sum /etc/sparkd/cluster.key | cut -d' ' -f1)" = \
  "$(on b sha256sum /etc/sparkd/cluster.key | cut -d' ' -f1)" ] || fail "the keys differ"
probe=${said[a:sparkc probe --peer spark2 --kind all]-}
grep -qi "gb/s" <<<"$probe" || fail "the probe's output has no Gb/s: $probe"
ok "one key, peers up and found over mDNS, a probe in Gb/s"
! on a sparkc keygen >/dev/null 2>&1 || fail "sparkc keygen replaced the package's key without --force"

step "sparkc topology --netplan --write: sparkd plans, sparkc as root writes, netplan generates"
netplan_file=/etc/netplan/60-sparkd-fabric.yaml
rc=0; out=$(on a runuser -l "$user" -c 'sparkc topology --netplan --write' 2>&1 </dev/null) || rc=$?
[ "$rc" = 1 ] && grep -q "only root may: run it with sudo" <<<"$out" ||
        fail "--write as $user (not root) exited $rc: $out"
# The plan gives enp1s0f0np0 a 169.254.X.0/24 address, not its 169.254/16 one, and a veth has no
# RDMA counters to tell its traffic: sparkd keeps the address, and says why.
rc=0; out=$(on a runuser -l "$user" -c 'sudo sparkc topology --netplan --write' 2>&1 </dev/null) || rc=$?
sed 's/^/    /' <<<"$out"
[ "$rc" = 1 ] && grep -q "^did not write $netplan_file\$" <<<"$out" &&
        grep -q "^refused $fabric: it has 169.254.17.1/16, not the planned .*its traffic is not known" <<<"$out" ||
        fail "--write over a netdev of unknown traffic exited $rc: $out"
[ -z "$(on a ls "$netplan_file" 2>/dev/null)" ] || fail "$netplan_file written though its only netdev was refused"
# Both ends moved to the plan by hand (ip from outside, as step 1's addresses were given): the
# file then readdresses nothing, and is written.
declare -A planned=()
for m in a b; do
        planned[$m]=$(on "$m" sparkc topology --netplan | sed -n 's/^ *- "\(169\.254\.[0-9.]*\/24\)"$/\1/p')
        [ -n "${planned[$m]}" ] || fail "no 169.254.X.Y/24 planned for $m: $(on "$m" sparkc topology --netplan 2>&1)"
done
ip -n "$ns_a" addr add "${planned[a]}" dev "$fabric"
ip -n "$ns_b" addr add "${planned[b]}" dev "$fabric"
ip -n "$ns_a" addr del 169.254.17.1/16 dev "$fabric"
ip -n "$ns_b" addr del 169.254.17.2/16 dev "$fabric"
netplan_written() { out=$(on a runuser -l "$user" -c 'sudo sparkc topology --netplan --write' 2>&1 </dev/null); }
wait_for 60 netplan_written || fail "sudo sparkc topology --netplan --write on spark1 after the move: $out"
netplan_written || fail "sudo sparkc topology --netplan --write on spark1 after the move: $out"
sed 's/^/    /' <<<"$out"
grep -q "^wrote $netplan_file\$" <<<"$out" || fail "--write did not say it wrote $netplan_file: $out"
[ "$(on a stat -c '%U %a' "$netplan_file")" = "root 600" ] ||
        fail "$netplan_file is not root's, mode 600: $(on a ls -l "$netplan_file")"
on a sparkc topology --netplan | on a cmp -s - "$netplan_file" ||
        fail "$netplan_file is not the plan sparkc topology --netplan shows: $(on a cat "$netplan_file")"
out=$(on a netplan generate 2>&1) || fail "netplan generate refused sparkd's file: $out"
on a grep -rqsF "${planned[a]}" /run/systemd/network ||
        fail "netplan generated no configuration with ${planned[a]}: $(on a ls /run/systemd/network 2>&1)"
ok "$netplan_file written as root, mode 600, netplan generated ${planned[a]} from it"
on a rm -f "$netplan_file"
wait_for 30 peer_up a spark2 || fail "a does not see spark2 up on the planned addresses"
wait_for 30 peer_up b spark1 || fail "b does not see spark1 up on the planned addresses"

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
on b systemctl reload sparkd || fail "systemctl reload sparkd on b"

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
[ "$iface" = "$fabric" ] || fail "link-flapping names SPARKD_IFACE=$iface, not $fabric"
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

echo "PASS: two booted machines follow the README from zero to a probe, then alert, reload, restart and stop sparkd"
exit 0
