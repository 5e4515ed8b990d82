#!/usr/bin/env bash
# Installs the Debian packages sparkd needs that are missing: `deps.sh build` for building and
# running, `deps.sh test` for the whole test suite as well. Needs root when anything is missing:
# started by another user, it then runs itself again through sudo.
set -euo pipefail
. "$(dirname "$0")/root.sh"

build_packages=(
        build-essential meson ninja-build pkg-config
        libevent-dev libjson-c-dev libsystemd-dev libinih-dev
        libnl-3-dev libnl-route-3-dev libssl-dev libavahi-client-dev libibverbs-dev librdmacm-dev
        liblldpctl-dev libyaml-dev systemd scdoc
)
test_packages=(
        "${build_packages[@]}"
        iproute2 procps util-linux python3 ethtool
        avahi-daemon avahi-utils dbus lldpd
        iperf3 prometheus prometheus-node-exporter python3-yaml graphviz
        clang-format
        clang libclang-rt-dev valgrind
        dpkg-dev debhelper fakeroot lintian bash-completion
        debootstrap systemd-container
        slurmd slurmctld munge
        qemu-system-x86 qemu-utils
)

case "${1:-build}" in
build) wanted=("${build_packages[@]}") ;;
test) wanted=("${test_packages[@]}") ;;
*) echo "usage: $0 build|test" >&2; exit 2 ;;
esac

missing=()
for p in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
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
