#!/usr/bin/env bash
# Installs the Debian packages sparkd needs that are missing: `deps.sh build` for building sparkd
# and its Debian package (what debian/control's Build-Depends name, with dpkg-buildpackage's
# tools), `deps.sh test` for the whole test suite as well. Needs root when anything is missing:
# started by another user, it then runs itself again through sudo. Tried on Debian 12 and 13.
set -euo pipefail
. "$(dirname "$0")/root.sh"

# systemd.pc (where units go) is in systemd-dev from systemd 253 on (Debian 13, Ubuntu 24.04), in
# systemd itself before (Debian 12). apt knows which exists here; before its first update, the
# release says.
systemd_pc_package() {
        local candidate
        candidate=$(apt-cache policy systemd-dev 2>/dev/null | sed -n 's/^ *Candidate: *//p')
        if [ -n "$candidate" ] && [ "$candidate" != "(none)" ]; then
                echo systemd-dev
                return
        fi
        if compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
                echo systemd
                return
        fi
        local ID="" VERSION_ID=""
        # shellcheck disable=SC1091
        . /etc/os-release 2>/dev/null || true
        case "$ID:${VERSION_ID%%.*}" in
        debian:1[3-9] | ubuntu:2[4-9] | ubuntu:[3-9]?) echo systemd-dev ;;
        *) echo systemd ;;
        esac
}

# Building and packaging: the compilers (build-essential), dpkg-buildpackage (dpkg-dev) and
# debhelper, then debian/control's Build-Depends. No fakeroot: the package builds without root
# (Rules-Requires-Root: no).
build_packages=(
        build-essential dpkg-dev debhelper meson ninja-build pkg-config
        libevent-dev libjson-c-dev libsystemd-dev libinih-dev
        libnl-3-dev libnl-route-3-dev libssl-dev libavahi-client-dev libibverbs-dev librdmacm-dev
        liblldpctl-dev liblz4-dev libyaml-dev scdoc "$(systemd_pc_package)"
)
# Everything the tests use, so that none skips for a missing package: the integration tests'
# tools (mpirun for the jobs test, jq, dot, nft, the openssl command, journald and
# systemd-socket-activate), netplan (netplan generate checks the files sparkd plans), promtool
# and PyYAML for the alert rules, the fuzzers' clang, the
# package tests (lintian, debootstrap and systemd-nspawn for their Debian trees) and the platform
# stages (qemu-user-static runs the arm64 build's tests; binfmt-support lets arm64 programs run
# by hand).
test_packages=(
        "${build_packages[@]}"
        systemd iproute2 procps util-linux passwd python3 python3-cryptography ethtool openssl jq graphviz nftables
        avahi-daemon avahi-utils dbus lldpd netplan.io
        iperf3 prometheus prometheus-node-exporter python3-yaml binutils
        clang-format
        clang libclang-rt-dev valgrind
        lintian bash-completion
        debootstrap systemd-container git
        slurmd slurmctld munge openmpi-bin python3-torch
        qemu-system-x86 qemu-utils qemu-user-static binfmt-support
)

case "${1:-build}" in
build) wanted=("${build_packages[@]}") ;;
test) wanted=("${test_packages[@]}") ;;
*) echo "usage: $0 build|test" >&2; exit 2 ;;
esac

# A name is there when a package of that name is installed, or one that provides it (pkgconf
# provides pkg-config on Debian 13, and a Build-Depends on pkg-config takes it).
declare -A present=()
while IFS='|' read -r status package provides; do
        [ "${status% }" = ii ] || continue
        present[$package]=1
        for name in ${provides//,/ }; do
                case "$name" in "("* | *")") ;; *) present[$name]=1 ;; esac
        done
done < <(dpkg-query -W -f='${db:Status-Abbrev}|${Package}|${Provides}\n' 2>/dev/null)
missing=()
for p in "${wanted[@]}"; do
        [ -n "${present[$p]:-}" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
        echo "missing Debian packages: ${missing[*]}; installing them as root" >&2
        as_root "$0" "$@"
fi
echo "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
