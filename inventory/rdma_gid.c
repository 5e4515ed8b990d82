/*
 * The GID table of an RDMA port: parsing the entries sysfs shows, their types (told apart by the
 * port's link layer), their netdevs and IPv4-mapped addresses, and the entry for an address.
 */
#include "rdma_gid.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "rdma.h"
#include "rdma_scan.h"
#include "sysfs.h"

#define ZERO_GID    "0000:0000:0000:0000:0000:0000:0000:0000"
#define IPV4_MAPPED "0000:0000:0000:0000:0000:ffff:"
#define WANT_GID    "8 groups of 4 hex digits"
#define WANT_TYPE   "\"IB/RoCE v1\" or \"RoCE v2\""

const char *rdma_gid_type_to_string(enum rdma_gid_type type)
{
        switch (type) {
        case RDMA_GID_IB:
                return "IB";
        case RDMA_GID_ROCE_V1:
                return "RoCE v1";
        case RDMA_GID_ROCE_V2:
                return "RoCE v2";
        case RDMA_GID_UNKNOWN:
                break;
        }
        return "unknown";
}

int rdma_parse_gid(const char *s, char *gid, size_t size, char *ipv4, size_t ipv4_size)
{
        unsigned hi, lo;

        if (strlen(s) != 39)
                return -EBADMSG;
        for (size_t i = 0; i < 39; i++)
                if (i % 5 == 4 ? s[i] != ':' : !isxdigit((unsigned char)s[i]))
                        return -EBADMSG;
        if (size < 40 || (ipv4 && ipv4_size < 16))
                return -ENOBUFS;
        for (size_t i = 0; i <= 39; i++)
                gid[i] = (char)tolower((unsigned char)s[i]);
        if (!ipv4)
                return 0;
        ipv4[0] = '\0';
        /* ::ffff:a.b.c.d, what the kernel puts in the table for each IPv4 address of the netdev. */
        if (strncmp(gid, IPV4_MAPPED, strlen(IPV4_MAPPED)) == 0 &&
            sscanf(gid + 30, "%4x:%4x", &hi, &lo) == 2)
                snprintf(ipv4, ipv4_size, "%u.%u.%u.%u", hi >> 8, hi & 0xff, lo >> 8, lo & 0xff);
        return 0;
}

static enum rdma_gid_type gid_type(struct rdma_scan *s, const struct rdma_port *p, unsigned index,
                                   const char *type)
{
        char q[48];

        /* One string for two types: the port's link layer tells them apart. With an unknown link
         * layer (already a warning) the type stays unknown. */
        if (strcmp(type, "IB/RoCE v1") == 0) {
                if (strcmp(p->link_layer, "Ethernet") == 0)
                        return RDMA_GID_ROCE_V1;
                if (strcmp(p->link_layer, "InfiniBand") == 0)
                        return RDMA_GID_IB;
                return RDMA_GID_UNKNOWN;
        }
        if (strcmp(type, "RoCE v2") == 0)
                return RDMA_GID_ROCE_V2;
        rdma_scan_warn(s, "gid %u: unknown type \"%s\" (expected %s)", index,
                       rdma_scan_quote(type, q, sizeof(q)), WANT_TYPE);
        return RDMA_GID_UNKNOWN;
}

static void port_read_gid(struct rdma_scan *s, struct rdma_port *p, unsigned index)
{
        struct rdma_gid *g = &p->gids[p->n_gids];
        char buf[SYSFS_BUF_SZ], q[48];
        int r;

        *g = (struct rdma_gid){ .index = index };
        r = sysfs_read(s->root, buf, sizeof(buf), "class/infiniband/%s/ports/%u/gids/%u", s->dev, s->port,
                       index);
        if (r < 0) {
                rdma_scan_warn(s, "gid %u: cannot read it: %s (expected %s)", index, strerror(-r), WANT_GID);
                return;
        }
        if (rdma_parse_gid(buf, g->gid, sizeof(g->gid), g->ipv4, sizeof(g->ipv4)) < 0) {
                rdma_scan_warn(s, "gid %u: malformed GID \"%s\" (expected %s)", index,
                               rdma_scan_quote(buf, q, sizeof(q)), WANT_GID);
                return;
        }
        if (strcmp(g->gid, ZERO_GID) == 0)
                return; /* an empty entry of the table */
        /* The kernel refuses to read the type of an unused entry (EINVAL): not a GID in use. */
        if (sysfs_read(s->root, buf, sizeof(buf), "class/infiniband/%s/ports/%u/gid_attrs/types/%u", s->dev,
                       s->port, index) < 0)
                return;
        g->type = gid_type(s, p, index, buf);
        if (sysfs_read(s->root, buf, sizeof(buf), "class/infiniband/%s/ports/%u/gid_attrs/ndevs/%u", s->dev,
                       s->port, index) == 0)
                rdma_copy_ifname(g->netdev, buf);
        p->n_gids++;
}

void rdma_gid_read_table(struct rdma_scan *s, struct rdma_port *p)
{
        _cleanup_free_ unsigned *indexes = NULL;
        char dir[32];
        size_t n = 0;
        int r;

        snprintf(dir, sizeof(dir), "ports/%u/gids", s->port);
        r = rdma_scan_list_indexes(s, dir, "gids", "GID index", &indexes, &n);
        if (r < 0) {
                if (r == -ENOMEM)
                        s->r = r;
                else
                        rdma_scan_warn(s, "cannot read the GID table: %s (expected gids/0, gids/1, ...)",
                                       strerror(-r));
                return;
        }
        p->gids = calloc(n + 1, sizeof(*p->gids));
        if (!p->gids) {
                s->r = -ENOMEM;
                return;
        }
        for (size_t i = 0; i < n; i++)
                port_read_gid(s, p, indexes[i]);
}

int rdma_port_gid_for_ipv4(const struct rdma_port *port, const char *ipv4)
{
        if (!port || !ipv4 || !ipv4[0])
                return -1;
        for (size_t i = 0; i < port->n_gids; i++)
                if (port->gids[i].type == RDMA_GID_ROCE_V2 && strcmp(port->gids[i].ipv4, ipv4) == 0)
                        return (int)port->gids[i].index;
        return -1;
}

json_object *rdma_gid_to_json(const struct rdma_gid *g)
{
        json_object *o = json_object_new_object();

        json_object_object_add(o, "index", json_object_new_int64(g->index));
        json_object_object_add(o, "gid", json_object_new_string(g->gid));
        json_object_object_add(o, "type", json_object_new_string(rdma_gid_type_to_string(g->type)));
        json_object_object_add(o, "netdev", json_object_new_string(g->netdev));
        json_object_object_add(o, "ipv4", g->ipv4[0] ? json_object_new_string(g->ipv4) : NULL);
        return o;
}
