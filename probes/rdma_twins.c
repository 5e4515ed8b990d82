/* The twins named on the command line (--twins DEV,DEV): devices used together as one port's
 * rails where the inventory cannot pair them by PCI address (no PCI parent, as soft-RoCE, or
 * functions of one port that are not numbered as a Spark's are). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "rdma_params.h"

/* "a, b, c" of the inventory's device names, for an error. */
static void device_names(const struct rdma_inventory *inv, char *out, size_t size)
{
        size_t used = 0;

        out[0] = '\0';
        for (size_t i = 0; i < inv->n && used < size; i++)
                used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "", inv->v[i].name);
        if (inv->n == 0)
                snprintf(out, size, "none");
}

/* Leaves dev without a twin, and its former twin without it. */
static void unpair(struct rdma_inventory *inv, struct rdma_device *dev)
{
        for (size_t i = 0; i < inv->n; i++)
                if (strcmp(inv->v[i].twin, dev->name) == 0)
                        inv->v[i].twin[0] = '\0';
        dev->twin[0] = '\0';
}

static struct rdma_device *find(struct rdma_inventory *inv, const char *name, size_t len)
{
        for (size_t i = 0; i < inv->n; i++)
                if (strlen(inv->v[i].name) == len && strncmp(inv->v[i].name, name, len) == 0)
                        return &inv->v[i];
        return NULL;
}

int rdma_twins_apply(struct rdma_inventory *inv, const char *list, char *err, size_t err_size)
{
        struct rdma_device *dev[2];
        const char *name[2], *comma = strchr(list, ',');
        size_t len[2];
        char names[256];

        if (!comma || strchr(comma + 1, ',') || comma == list || comma[1] == '\0') {
                snprintf(err, err_size,
                         "--twins '%s': expected two RDMA devices separated by a comma (DEV,DEV), such as "
                         "rocep1s0f1,roceP2p1s0f1",
                         list);
                return -EINVAL;
        }
        name[0] = list;
        len[0] = (size_t)(comma - list);
        name[1] = comma + 1;
        len[1] = strlen(comma + 1);
        if (len[0] == len[1] && strncmp(name[0], name[1], len[0]) == 0) {
                snprintf(err, err_size, "--twins '%s' names %.*s twice: expected two different RDMA devices",
                         list, (int)len[0], name[0]);
                return -EINVAL;
        }
        for (size_t i = 0; i < ARRAY_SIZE(dev); i++) {
                dev[i] = find(inv, name[i], len[i]);
                if (!dev[i]) {
                        device_names(inv, names, sizeof(names));
                        snprintf(err, err_size,
                                 "--twins '%s' names %.*s, which this node does not have (its RDMA devices: "
                                 "%s)",
                                 list, (int)len[i], name[i], names);
                        return -ENODEV;
                }
        }
        unpair(inv, dev[0]);
        unpair(inv, dev[1]);
        snprintf(dev[0]->twin, sizeof(dev[0]->twin), "%s", dev[1]->name);
        snprintf(dev[1]->twin, sizeof(dev[1]->twin), "%s", dev[0]->name);
        return 0;
}
