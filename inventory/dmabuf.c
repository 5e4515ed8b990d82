#include "dmabuf.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/macro.h"
#include "hostfacts.h"
#include "sysfs.h"

/* DMA-BUF GPU Direct needs the open kernel module of this driver branch or later. */
#define DMABUF_MIN_DRIVER_MAJOR 580
/* Linux 5.12 let RDMA register a dma-buf as a memory region (ib_umem_dmabuf; user verbs memory
 * selects DMA_SHARED_BUFFER since then), which is the kernel half of DMA-BUF GPU Direct. */
#define DMABUF_MIN_KERNEL_MAJOR 5
#define DMABUF_MIN_KERNEL_MINOR 12

_printf_(2, 3) static void set_reason(struct hostfacts *f, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(f->dmabuf_reason, sizeof(f->dmabuf_reason), fmt, ap);
        va_end(ap);
}

/*
 * DMA-BUF GPU Direct needs the open NVIDIA kernel module 580 or later and a kernel
 * whose RDMA stack imports dma-bufs. No sysfs file says the latter: /sys/kernel/dmabuf exists
 * only with CONFIG_DMABUF_SYSFS_STATS (off in most distribution kernels), and dma-buf is built
 * in, so it has no /sys/module entry. The kernel release is the indicator: 5.12 or later.
 */
void dmabuf_decide(const char *root, struct hostfacts *f)
{
        unsigned long driver_major;
        unsigned major, minor;
        char release[128];

        f->is_dmabuf_possible = false;
        if (!f->has_nvidia_driver) {
                set_reason(f, "no NVIDIA driver is loaded");
                return;
        }
        if (!f->driver_version[0]) {
                set_reason(f, "the NVIDIA driver's version line cannot be read; DMA-BUF needs the open "
                              "kernel module 580 or later");
                return;
        }
        if (!f->is_open_kernel_module) {
                set_reason(f, "the NVIDIA driver is the proprietary kernel module; DMA-BUF needs the open "
                              "one (580 or later)");
                return;
        }
        driver_major = strtoul(f->driver_version, NULL, 10);
        if (driver_major < DMABUF_MIN_DRIVER_MAJOR) {
                set_reason(f, "the open NVIDIA kernel module is %s; DMA-BUF needs 580 or later",
                           f->driver_version);
                return;
        }
        if (sysfs_read(root, release, sizeof(release), "proc/sys/kernel/osrelease") < 0 ||
            sscanf(release, "%u.%u", &major, &minor) != 2 || !isdigit((unsigned char)release[0])) {
                set_reason(
                        f,
                        "the kernel release is unknown; RDMA imports DMA-BUF memory only since Linux 5.12");
                return;
        }
        if (major < DMABUF_MIN_KERNEL_MAJOR ||
            (major == DMABUF_MIN_KERNEL_MAJOR && minor < DMABUF_MIN_KERNEL_MINOR)) {
                set_reason(f, "kernel %.40s is older than 5.12, the first whose RDMA imports DMA-BUF memory",
                           release);
                return;
        }
        f->is_dmabuf_possible = true;
        set_reason(f,
                   "the open NVIDIA kernel module %s on kernel %.40s can hand GPU memory to the NIC "
                   "through DMA-BUF",
                   f->driver_version, release);
}
