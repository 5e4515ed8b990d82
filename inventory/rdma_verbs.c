/* The libibverbs half of the RDMA inventory: the active MTU of each port, which sysfs does not
 * show. Nothing here is fatal: a host without verbs still has its sysfs inventory. */
#include "rdma_verbs.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"

static unsigned mtu_bytes(enum ibv_mtu mtu)
{
        switch (mtu) {
        case IBV_MTU_256:
                return 256;
        case IBV_MTU_512:
                return 512;
        case IBV_MTU_1024:
                return 1024;
        case IBV_MTU_2048:
                return 2048;
        case IBV_MTU_4096:
                return 4096;
        }
        return 0;
}

/* The first failure is the one worth reading; later ones are usually its consequences. */
_printf_(2, 3) static void verbs_error(struct rdma_inventory *inv, const char *fmt, ...)
{
        va_list ap;

        if (inv->verbs_error[0])
                return;
        va_start(ap, fmt);
        vsnprintf(inv->verbs_error, sizeof(inv->verbs_error), fmt, ap);
        va_end(ap);
}

static struct ibv_device *find_device(struct ibv_device **list, int n, const char *name)
{
        for (int i = 0; i < n; i++)
                if (strcmp(ibv_get_device_name(list[i]), name) == 0)
                        return list[i];
        return NULL;
}

static void device_enrich(struct rdma_inventory *inv, struct rdma_device *d, struct ibv_device *dev)
{
        struct ibv_context *ctx = ibv_open_device(dev);

        if (!ctx) {
                verbs_error(inv, "cannot open %s: %s", d->name, strerror(errno));
                return;
        }
        for (size_t i = 0; i < d->n_ports; i++) {
                struct rdma_port *p = &d->ports[i];
                struct ibv_port_attr attr;
                int r;

                if (p->num < 1 || p->num > 255)
                        continue; /* verbs numbers ports 1..255 (uint8_t) */
                r = ibv_query_port(ctx, (uint8_t)p->num, &attr);
                if (r != 0) {
                        verbs_error(inv, "cannot query %s port %u: %s", d->name, p->num, strerror(r));
                        continue;
                }
                p->active_mtu = mtu_bytes(attr.active_mtu);
        }
        ibv_close_device(ctx);
}

int rdma_verbs_enrich(struct rdma_inventory *inv)
{
        struct ibv_device **list;
        int n = 0;

        inv->verbs_used = true;
        errno = 0;
        list = ibv_get_device_list(&n);
        if (!list) {
                if (errno == ENOMEM)
                        return -ENOMEM;
                /* ENOSYS: no uverbs in the kernel, the usual state of a host without RDMA. */
                if (errno == ENOSYS)
                        verbs_error(inv,
                                    "no RDMA device found by libibverbs (no kernel support: ib_uverbs)");
                else
                        verbs_error(inv, "libibverbs cannot list devices: %s", strerror(errno));
                return 0;
        }
        if (n == 0)
                verbs_error(inv, "no RDMA device found by libibverbs");
        for (size_t i = 0; i < inv->n && n > 0; i++) {
                struct rdma_device *d = &inv->v[i];
                struct ibv_device *dev = find_device(list, n, d->name);

                if (!dev) {
                        verbs_error(inv, "libibverbs does not know %s (no user-space provider?)", d->name);
                        continue;
                }
                device_enrich(inv, d, dev);
        }
        ibv_free_device_list(list);
        return 0;
}
