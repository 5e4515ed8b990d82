#!/usr/bin/env bash
# Real RDMA verbs on a machine without RDMA hardware: Debian 12's kernel booted in QEMU (software
# emulation, no KVM needed) with soft-RoCE (rdma_rxe) devices over veth pairs. This script
# prepares the guest and boots it; tests/rdmavm/guest.sh runs inside and says what it checks.
#
# The guest's root filesystem (debootstrap of bookworm with the kernel, rdma-core, perftest and
# the libraries sparkd links) is made once and cached (SPARKD_RDMA_VM_CACHE, default
# /var/cache/sparkd-tests) with a stamp; only its first build, and a change of its package list
# or of its init, need the Debian mirror. The build under test does not go into the image: it
# reaches the guest on a 9p share together with guest.sh, and the guest's log and results come
# back on the same share. Nothing leaves the guest: its only interfaces are the veth pairs it
# makes itself (QEMU is started with -nodefaults and no network device).
#
# usage: test_rdma_vm.sh BUILD_DIR [SOURCE_ROOT]
# env:   SPARKD_RDMA_VM_CACHE  where the image is kept
#        SPARKD_RDMA_VM_PHASES what the guest runs, of: inventory perf probe probe_failures
#                              failures (default: all; probe_failures after probe)
#        SPARKD_RDMA_VM_PERF_RUNS  alternating runs of each tool in perf (default 5)
#        SPARKD_RDMA_VM_PERF_LAT_REPEAT latency runs of each tool per perf run (default 3)
#        SPARKD_RDMA_VM_PERF_ITERS writes per QP in each bandwidth run (default 200; more
#                                  averages out more of the emulation's swings)
#        PERF_BW_MIN, PERF_LAT_TOL the probe's bounds against perftest (tests/rdmavm/perf_table.py;
#                              0.97 and 0.1 on a machine that runs the guest alone)
#        KEEP_TEST_TMP=1       keep the work directory (the share, the console)
# exit:  0 pass, 1 fail, 77 skip (not root, no QEMU, no image and no way to make one)
set -euo pipefail

build=$(cd "${1:?usage: test_rdma_vm.sh BUILD_DIR [SOURCE_ROOT]}" && pwd)
src=${2:-$(cd "$(dirname "$0")/../.." && pwd)}
here=$src/tests/rdmavm
cache=${SPARKD_RDMA_VM_CACHE:-/var/cache/sparkd-tests}
image_dir=$cache/rdma-vm-bookworm
stamp=$image_dir.stamp
# The kernel with rdma_rxe, udev-free module loading, rdma-core's tools, perftest to compare
# with, the shared libraries sparkd, sparkc and the probe helpers link, and nftables for the NAT
# between two daemons' peer ports (phase_probe.sh).
guest_packages=kmod,linux-image-amd64,initramfs-tools,rdma-core,ibverbs-providers,ibverbs-utils
guest_packages+=,rdmacm-utils,perftest,iproute2,python3,procps,iputils-ping
guest_packages+=,libevent-2.1-7,libevent-core-2.1-7,libevent-extra-2.1-7,libevent-openssl-2.1-7
guest_packages+=,libevent-pthreads-2.1-7
guest_packages+=,libjson-c5,libinih1,libnl-3-200,libnl-route-3-200,libssl3,libavahi-client3
guest_packages+=,libyaml-0-2,libibverbs1,librdmacm1,nftables,lldpd
# Under software emulation a probe of 5 s and perftest's runs take minutes; the guest's whole run
# is bounded here so a hang fails the test instead of holding CI.
guest_timeout_s=${SPARKD_RDMA_VM_TIMEOUT:-420}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
step() { echo "--- $(date -u +%T) $*"; }

[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, mkfs of the guest's image)"
for tool in qemu-system-x86_64 mkfs.ext4 flock; do
        command -v "$tool" >/dev/null || skip "$tool not found (Debian: qemu-system-x86, e2fsprogs, util-linux)"
done
for f in daemon/sparkd client/sparkc probes/sparkd-probe-rdma; do
        [ -x "$build/$f" ] || skip "$build/$f was not built"
done

tmp=$(mktemp -d /tmp/sparkd-rdma-vm.XXXXXX)
qemu_pid=
cleanup() {
        local rc=$?
        trap - EXIT
        [ -z "$qemu_pid" ] || kill -KILL "$qemu_pid" 2>/dev/null || true
        if [ -n "${KEEP_TEST_TMP:-}" ]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
        exit "$rc"
}
trap cleanup EXIT

# --- the cached image ------------------------------------------------------------------------
# Several runs may share the cache: one makes the image under an exclusive lock, all boot from
# it under a shared one (QEMU opens it read-only with a throw-away overlay: -snapshot).
mkdir -p "$cache"
exec 9>"$image_dir.lock"
flock -x 9
want="debootstrap --variant=minbase --include=$guest_packages bookworm; init $(sha256sum <"$here/guest_init.sh" | cut -c1-16)"
if [ ! -f "$image_dir/rootfs.img" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
        command -v debootstrap >/dev/null || skip "no cached image in $image_dir and no debootstrap to make one (Debian: debootstrap)"
        step "making the guest's image (first run; needs the Debian mirror): $want"
        rm -rf "$image_dir" "$image_dir.new" "$stamp"
        mkdir -p "$image_dir.new"
        tree=$image_dir.new/tree
        mirror=$(sed -n 's/^URIs: *\(http[^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
        # shellcheck disable=SC2086
        if ! nice debootstrap --variant=minbase --include="$guest_packages" bookworm "$tree" $mirror \
                >"$tmp/debootstrap.log" 2>&1; then
                tail -n 20 "$tmp/debootstrap.log"
                rm -rf "$image_dir.new"
                skip "debootstrap of bookworm failed (no access to the Debian mirror?), last lines above"
        fi
        install -m 755 "$here/guest_init.sh" "$tree/sbin/sparkd-vm-init"
        echo sparkd-vm >"$tree/etc/hostname"
        rm -rf "$tree"/var/cache/apt/archives/*.deb "$tree"/var/lib/apt/lists/*
        cp "$tree"/boot/vmlinuz-* "$image_dir.new/vmlinuz"
        cp "$tree"/boot/initrd.img-* "$image_dir.new/initrd.img"
        mkfs.ext4 -q -F -d "$tree" "$image_dir.new/rootfs.img" 2G
        rm -rf "$tree"
        mv "$image_dir.new" "$image_dir"
        echo "$want" >"$stamp"
fi
flock -s 9
echo "ok:   image $image_dir"

[ "${SPARKD_RDMA_VM_PREPARE_ONLY:-}" = 1 ] && exit 0

# --- the share: the build under test, the guest's scripts, its results -----------------------
share=$tmp/share
mkdir -p "$share/build" "$share/out"
cp "$build/daemon/sparkd" "$build/client/sparkc" "$build"/probes/sparkd-probe-* "$share/build/" 2>/dev/null || true
rm -rf "$share"/build/*.p
cp "$here"/guest.sh "$here"/phase_*.sh "$here"/*.py "$share/"
echo "${SPARKD_RDMA_VM_PHASES:-inventory perf probe probe_failures failures}" >"$share/phases"
{
        echo "PERF_RUNS=${SPARKD_RDMA_VM_PERF_RUNS:-5}"
        [ -z "${SPARKD_RDMA_VM_PERF_ITERS:-}" ] || echo "PERF_ITERS=$SPARKD_RDMA_VM_PERF_ITERS"
        [ -z "${SPARKD_RDMA_VM_PERF_LAT_REPEAT:-}" ] || echo "PERF_LAT_REPEAT=$SPARKD_RDMA_VM_PERF_LAT_REPEAT"
        [ -z "${PERF_BW_MIN:-}" ] || echo "export PERF_BW_MIN=$PERF_BW_MIN"
        [ -z "${PERF_LAT_TOL:-}" ] || echo "export PERF_LAT_TOL=$PERF_LAT_TOL"
} >"$share/settings"

# --- boot ------------------------------------------------------------------------------------
step "booting Debian's kernel under QEMU (TCG), the guest runs: $(cat "$share/phases")"
t0=$(date +%s)
# -snapshot: the cached image stays as it is, what the guest writes goes to a temporary overlay.
timeout --kill-after=10 "$guest_timeout_s" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 2 -m 2048 \
        -nographic -nodefaults -serial stdio -no-reboot -snapshot \
        -kernel "$image_dir/vmlinuz" -initrd "$image_dir/initrd.img" \
        -append "console=ttyS0 root=/dev/vda rw init=/sbin/sparkd-vm-init panic=-1 quiet" \
        -drive "file=$image_dir/rootfs.img,format=raw,if=virtio,cache=unsafe" \
        -virtfs "local,path=$share,mount_tag=host0,security_model=none,id=host0" \
        >"$tmp/console.log" 2>&1 </dev/null &
qemu_pid=$!
rc=0
wait "$qemu_pid" || rc=$?
qemu_pid=
echo "ok:   the guest ran $(($(date +%s) - t0)) s from boot to power-off (QEMU's status $rc)"
cat "$share/out/guest.log" 2>/dev/null || { tail -n 40 "$tmp/console.log"; fail "the guest wrote no log (console above)"; }
[ "$rc" != 124 ] || fail "the guest did not power off within $guest_timeout_s s"
guest_rc=$(cat "$share/out/guest.rc" 2>/dev/null || echo none)
[ "$guest_rc" = 0 ] || fail "the guest's checks failed (status $guest_rc)"
echo "PASS: soft-RoCE in a VM: $(cat "$share/phases")"
