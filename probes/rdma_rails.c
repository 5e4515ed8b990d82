/* Which RDMA devices and GIDs a probe uses: a port's twins, chosen from the fabric inventory. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rdma_params.h"

static const struct rdma_gid *gid_at(const struct rdma_port *port, int index)
{
        for (size_t i = 0; i < port->n_gids; i++)
                if ((int)port->gids[i].index == index)
                        return &port->gids[i];
        return NULL;
}

static void rail_fill(struct rdma_rail *r, const struct rdma_device *dev, const struct rdma_port *port,
                      const struct rdma_gid *gid)
{
        *r = (struct rdma_rail){ .port = port->num,
                                 .gid_index = (int)gid->index,
                                 .active_mtu = port->active_mtu,
                                 .speed_mbps = port->netdev_speed_mbps,
                                 .rate_gbps = port->rate_gbps };
        snprintf(r->device, sizeof(r->device), "%s", dev->name);
        snprintf(r->netdev, sizeof(r->netdev), "%s", port->netdev);
        snprintf(r->gid, sizeof(r->gid), "%s", gid->gid);
        if (gid->ipv4[0]) {
                snprintf(r->address, sizeof(r->address), "%s", gid->ipv4);
        } else {
                struct in6_addr a;
                char text[INET6_ADDRSTRLEN] = "";

                /* A link-local GID is the netdev's fe80:: address: that is where RDMA CM reaches it. */
                if (inet_pton(AF_INET6, gid->gid, &a) == 1)
                        inet_ntop(AF_INET6, &a, text, sizeof(text));
                snprintf(r->address, sizeof(r->address), "%s%%%s", text, port->netdev);
                r->is_ipv6 = true;
        }
}

/* The RoCE v2 GID a twin without an IPv4 address is reached by: its netdev's link-local one. */
static const struct rdma_gid *link_local_gid(const struct rdma_port *port)
{
        for (size_t i = 0; i < port->n_gids; i++)
                if (port->gids[i].type == RDMA_GID_ROCE_V2 && strncmp(port->gids[i].gid, "fe80:", 5) == 0 &&
                    port->netdev[0] && strcmp(port->gids[i].netdev, port->netdev) == 0)
                        return &port->gids[i];
        return NULL;
}

/* The RoCE v2 GID of the port's netdev's own IPv4 address: the table also holds the addresses of
 * VLANs and macvlans on top of it (their entries name their own netdev), another subnet. */
static const struct rdma_gid *own_ipv4_gid(const struct rdma_port *port)
{
        for (size_t i = 0; i < port->n_gids; i++)
                if (port->gids[i].type == RDMA_GID_ROCE_V2 && port->gids[i].ipv4[0] && port->netdev[0] &&
                    strcmp(port->gids[i].netdev, port->netdev) == 0)
                        return &port->gids[i];
        return NULL;
}

static int no_device(char *err, size_t err_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int no_device(char *err, size_t err_size, const char *fmt, ...)
{
        char why[256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        snprintf(err, err_size, "no RDMA device: %s; " RDMA_FALLBACK_REASON, why);
        return -ENODEV;
}

/* The GID index a user named for the device holding ipv4 (whose own RoCE v2 GID of ipv4 is at
 * by_address): 0 when it is a RoCE v2 GID of ipv4, else -EINVAL with what it is instead. */
static int named_gid_check(const struct rdma_device *dev, const struct rdma_port *port, int index,
                           const char *ipv4, int by_address, char *err, size_t err_size)
{
        const struct rdma_gid *gid = gid_at(port, index);

        if (gid && gid->type == RDMA_GID_ROCE_V2 && strcmp(gid->ipv4, ipv4) == 0)
                return 0;
        if (!gid)
                snprintf(err, err_size,
                         "GID index %d: %s port %u has no GID at that index; expected the index of the "
                         "RoCE v2 GID of %s, which is %d",
                         index, dev->name, port->num, ipv4, by_address);
        else
                snprintf(err, err_size,
                         "GID index %d of %s port %u is %s (%s%s%s), not the RoCE v2 GID of %s; "
                         "expected %d, the index that GID has",
                         index, dev->name, port->num, gid->gid, rdma_gid_type_to_string(gid->type),
                         gid->ipv4[0] ? ", " : "", gid->ipv4, ipv4, by_address);
        return -EINVAL;
}

int rdma_rails_choose(const struct rdma_inventory *inv, const char *ipv4, int gid_index, unsigned max_rails,
                      struct rdma_rail *rails, size_t *n_rails, char *note, size_t note_size, char *err,
                      size_t err_size)
{
        const struct rdma_device *dev = NULL, *twin;
        const struct rdma_port *port = NULL, *tport;
        const struct rdma_gid *gid;
        int index = -1;

        *n_rails = 0;
        note[0] = '\0';
        if (inv->n == 0)
                return no_device(err, err_size,
                                 "this node has none (/sys/class/infiniband lists no device)");
        for (size_t i = 0; i < inv->n && index < 0; i++)
                for (size_t j = 0; j < inv->v[i].n_ports && index < 0; j++) {
                        index = rdma_port_gid_for_ipv4(&inv->v[i].ports[j], ipv4);
                        if (index >= 0) {
                                dev = &inv->v[i];
                                port = &inv->v[i].ports[j];
                        }
                }
        if (index < 0)
                return no_device(err, err_size,
                                 "no RoCE v2 GID of this node's RDMA devices holds %s (%s is not on an RDMA "
                                 "port, or its GID table does not show it)",
                                 ipv4, ipv4);
        if (port->state != RDMA_PORT_ACTIVE)
                return no_device(err, err_size, "%s, which holds the address, is %s", dev->name,
                                 port->state_name[0] ? port->state_name : "not ACTIVE");
        if (gid_index >= 0) {
                int r = named_gid_check(dev, port, gid_index, ipv4, index, err, err_size);

                if (r < 0)
                        return r;
                index = gid_index;
        }
        gid = gid_at(port, index);
        rail_fill(&rails[(*n_rails)++], dev, port, gid);
        if (max_rails < 2 || !dev->twin[0])
                return 0;
        twin = rdma_find_device(inv, dev->twin);
        tport = twin && twin->n_ports > 0 ? &twin->ports[0] : NULL;
        if (!tport || tport->state != RDMA_PORT_ACTIVE) {
                snprintf(note, note_size, "twin %s left out: its port is %s", dev->twin,
                         tport && tport->state_name[0] ? tport->state_name : "not ACTIVE");
                return 0;
        }
        gid = own_ipv4_gid(tport);
        if (!gid)
                gid = link_local_gid(tport);
        if (!gid) {
                snprintf(note, note_size, "twin %s left out: no RoCE v2 GID on its netdev %s", twin->name,
                         tport->netdev[0] ? tport->netdev : "(none)");
                return 0;
        }
        rail_fill(&rails[(*n_rails)++], twin, tport, gid);
        return 0;
}
