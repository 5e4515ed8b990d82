#!/bin/sh
# PID 1 of the rdma-vm guest (baked into the cached root filesystem as /sbin/sparkd-vm-init):
# mounts what a system needs and the host's 9p share, runs the share's guest.sh with its output
# going back to the share, and powers off. Whatever guest.sh does, the machine stops.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /dev/shm
mkdir -p /run/netns
modprobe 9pnet_virtio
modprobe 9p
mount -t 9p -o trans=virtio,version=9p2000.L,msize=1048576 host0 /mnt
if [ -f /mnt/guest.sh ]; then
        sh /mnt/guest.sh >/mnt/out/guest.log 2>&1
        echo $? >/mnt/out/guest.rc
else
        echo "no guest.sh on the 9p share"
fi
sync
umount /mnt
echo o >/proc/sysrq-trigger
sleep 30
