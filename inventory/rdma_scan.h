/*
 * One pass over class/infiniband, shared by the device and port reader (rdma.c) and the GID
 * table reader (rdma_gid.c): where the scan is, its warnings (each naming the device and port),
 * and the sysfs helpers both need. Internal to the RDMA inventory.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"
#include "rdma.h"

#define SYSFS_BUF_SZ 128

/* What the scan is looking at, so that every warning says where it is; r is the first hard error
 * (only -ENOMEM: everything else is a warning). */
struct rdma_scan {
        const char *root;
        struct rdma_inventory *inv;
        const char *dev; /* NULL while listing class/infiniband itself */
        bool has_port;
        unsigned port;
        int r;
};

/* Adds "DEV port N: MESSAGE" (as far as the scan has got) to the warnings; -ENOMEM goes to s->r. */
void rdma_scan_warn(struct rdma_scan *s, const char *fmt, ...) _printf_(2, 3);
/* Sysfs content quoted in a warning: bounded, control characters as '?'. */
const char *rdma_scan_quote(const char *s, char *buf, size_t size);
/* An interface name into dst (IF_NAMESIZE bytes); false when it is empty or too long. */
bool rdma_copy_ifname(char *dst, const char *name);
/*
 * The numeric entries of class/infiniband/DEV/DIR, ascending (sysfs_list sorts "10" before "2").
 * Other names are warnings: the kernel writes only numbers there, so anything else is damage.
 */
int rdma_scan_list_indexes(struct rdma_scan *s, const char *dir, const char *label, const char *what,
                           unsigned **out, size_t *n_out);
