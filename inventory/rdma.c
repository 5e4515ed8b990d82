/*
 * The RDMA inventory from sysfs: one pass over class/infiniband that turns every file into plain
 * structs, and every surprise into a warning naming the device, the port and what was expected.
 * libibverbs (rdma_verbs.c) only adds what sysfs does not show.
 */
#include "rdma.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "netif.h"
#include "rdma_gid.h"
#include "rdma_scan.h"
#include "rdma_verbs.h"
#include "sysfs.h"

#define WANT_STATE "\"N: NAME\" such as \"4: ACTIVE\""
#define WANT_PHYS  "\"N: NAME\" such as \"5: LinkUp\""
#define WANT_LAYER "Ethernet or InfiniBand"
#define WANT_RATE  "\"N Gb/sec (...)\" such as \"200 Gb/sec (4X HDR)\""

int rdma_parse_state(const char *s, unsigned *num, char *name, size_t size)
{
        uint64_t v;
        char digits[16];
        const char *colon = strchr(s, ':'), *p;
        size_t len = colon ? (size_t)(colon - s) : 0;

        /* The kernel writes "%d: %s": a number, a colon, a blank and a name. */
        if (len == 0 || len >= sizeof(digits) || strspn(s, "0123456789") != len)
                return -EBADMSG;
        memcpy(digits, s, len);
        digits[len] = '\0';
        if (parse_uint64(digits, 10, 0, UINT32_MAX, &v) < 0)
                return -EBADMSG;
        p = colon + 1 + strspn(colon + 1, " ");
        if (p == colon + 1 || !*p || !isgraph((unsigned char)*p))
                return -EBADMSG;
        for (const char *c = p; *c; c++)
                if (!isprint((unsigned char)*c))
                        return -EBADMSG;
        if (strlen(p) >= size)
                return -ENOBUFS;
        *num = (unsigned)v;
        strcpy(name, p);
        return 0;
}

int rdma_parse_rate_gbps(const char *s, unsigned *gbps)
{
        size_t n = strspn(s, "0123456789"), frac = 0;
        char digits[16];
        uint64_t v;

        /* "%d%s Gb/sec (%dX%s)": the integer part counts, a ".5" (2.5 Gb/s of 1X SDR) does not. */
        if (n == 0 || n >= sizeof(digits))
                return -EBADMSG;
        if (s[n] == '.') {
                frac = strspn(s + n + 1, "0123456789");
                if (frac == 0)
                        return -EBADMSG;
                frac++;
        }
        if (strncmp(s + n + frac, " Gb/sec", 7) != 0 || (s[n + frac + 7] && s[n + frac + 7] != ' '))
                return -EBADMSG;
        memcpy(digits, s, n);
        digits[n] = '\0';
        if (parse_uint64(digits, 10, 0, UINT32_MAX, &v) < 0)
                return -EBADMSG;
        *gbps = (unsigned)v;
        return 0;
}

/* A PCI address as sysfs writes it, "0000:01:00.1" (the same test as netif.c's). */
static bool is_pci_address(const char *s)
{
        unsigned domain, bus, dev, fn;
        int n = 0;

        if (!isxdigit((unsigned char)s[0]) || s[strspn(s, "0123456789abcdef:.")])
                return false;
        return sscanf(s, "%x:%x:%x.%x%n", &domain, &bus, &dev, &fn, &n) == 4 && s[n] == '\0';
}

/* Reads ports/N/ATTR of the port being scanned; a failure is a warning saying what was expected. */
static bool port_attr(struct rdma_scan *s, const char *attr, char *buf, size_t size, const char *expected)
{
        int r = sysfs_read(s->root, buf, size, "class/infiniband/%s/ports/%u/%s", s->dev, s->port, attr);

        if (r < 0) {
                rdma_scan_warn(s, "cannot read %s: %s (expected %s)", attr, strerror(-r), expected);
                return false;
        }
        return true;
}

static void port_read_state(struct rdma_scan *s, const char *attr, const char *expected, unsigned *num,
                            char *name, size_t size)
{
        char buf[SYSFS_BUF_SZ], q[48];

        if (port_attr(s, attr, buf, sizeof(buf), expected) && rdma_parse_state(buf, num, name, size) < 0)
                rdma_scan_warn(s, "%s \"%s\" is malformed (expected %s)", attr,
                               rdma_scan_quote(buf, q, sizeof(q)), expected);
}

/* The port's netdev as ibdev2netdev finds it: the netdev of GID 0, else a soft device's parent,
 * else the PCI function's own netdev (the only one, or the one whose dev_port is this port on a
 * multi-port function). */
int rdma_port_netdev(const char *sysfs_root, const char *dev, unsigned port, char ifname[IF_NAMESIZE])
{
        char buf[SYSFS_BUF_SZ], **names = NULL;
        int r;

        ifname[0] = '\0';
        if (sysfs_read(sysfs_root, buf, sizeof(buf), "class/infiniband/%s/ports/%u/gid_attrs/ndevs/0", dev,
                       port) == 0 &&
            rdma_copy_ifname(ifname, buf))
                return 0;
        /* A soft-RoCE device (rxe, siw) names its netdev in parent, also while the netdev is down
         * and has no GIDs; it has no PCI function to look under. */
        if (sysfs_read(sysfs_root, buf, sizeof(buf), "class/infiniband/%s/parent", dev) == 0 && buf[0] &&
            rdma_copy_ifname(ifname, buf))
                return 0;
        r = sysfs_list(sysfs_root, &names, "class/infiniband/%s/device/net", dev);
        if (r < 0)
                return r == -ENOMEM ? r : -ENOENT;
        if (r == 1) {
                rdma_copy_ifname(ifname, names[0]);
        } else {
                for (char **name = names; *name; name++) {
                        uint64_t dev_port;

                        if (sysfs_read_u64(sysfs_root, &dev_port,
                                           "class/infiniband/%s/device/net/%s/dev_port", dev, *name) == 0 &&
                            dev_port + 1 == port && rdma_copy_ifname(ifname, *name))
                                break;
                }
        }
        strv_free(names);
        return ifname[0] ? 0 : -ENOENT;
}

static void port_read_netdev(struct rdma_scan *s, struct rdma_port *p)
{
        if (rdma_port_netdev(s->root, s->dev, s->port, p->netdev) == -ENOMEM)
                s->r = -ENOMEM;
}

static void port_read(struct rdma_scan *s, unsigned num, struct rdma_port *p)
{
        char buf[SYSFS_BUF_SZ], q[48];

        *p = (struct rdma_port){ .num = num, .roce_v2_ipv4_gid = -1 };
        s->has_port = true;
        s->port = num;
        port_read_state(s, "state", WANT_STATE, &p->state, p->state_name, sizeof(p->state_name));
        port_read_state(s, "phys_state", WANT_PHYS, &p->phys_state, p->phys_state_name,
                        sizeof(p->phys_state_name));
        if (port_attr(s, "link_layer", buf, sizeof(buf), WANT_LAYER)) {
                if (strcmp(buf, "Ethernet") == 0 || strcmp(buf, "InfiniBand") == 0)
                        strcpy(p->link_layer, buf);
                else
                        rdma_scan_warn(s, "unknown link layer \"%s\" (expected %s)",
                                       rdma_scan_quote(buf, q, sizeof(q)), WANT_LAYER);
        }
        if (port_attr(s, "rate", buf, sizeof(buf), WANT_RATE)) {
                if (rdma_parse_rate_gbps(buf, &p->rate_gbps) == 0 && strlen(buf) < sizeof(p->rate))
                        strcpy(p->rate, buf);
                else
                        rdma_scan_warn(s, "rate \"%s\" is malformed (expected %s)",
                                       rdma_scan_quote(buf, q, sizeof(q)), WANT_RATE);
        }
        rdma_gid_read_table(s, p);
        port_read_netdev(s, p);
        p->netdev_speed_mbps = -1;
        if (p->netdev[0] && sysfs_read(s->root, buf, sizeof(buf), "class/net/%s/speed", p->netdev) == 0) {
                uint64_t mbps;

                /* -1 (no link) and garbage both stay unknown. */
                if (parse_uint64(buf, 10, 1, INT64_MAX, &mbps) == 0)
                        p->netdev_speed_mbps = (int64_t)mbps;
        }
        /* NCCL_IB_GID_INDEX: often 3, but 5 once the netdev has an IPv6 address besides fe80. */
        for (size_t i = 0; i < p->n_gids; i++) {
                if (p->gids[i].type == RDMA_GID_ROCE_V2 && p->gids[i].ipv4[0]) {
                        p->roce_v2_ipv4_gid = (int)p->gids[i].index;
                        break;
                }
        }
        s->has_port = false;
}

static void device_read(struct rdma_scan *s, const char *name, struct rdma_device *d)
{
        _cleanup_free_ unsigned *ports = NULL;
        char pci[sizeof(d->pci)];
        size_t n = 0;
        int r;

        snprintf(d->name, sizeof(d->name), "%s", name);
        s->dev = d->name;
        /* Soft devices (rxe, siw) have no parent device, platform ones (hns) no PCI address. */
        if (sysfs_link_name(s->root, pci, sizeof(pci), "class/infiniband/%s/device", name) == 0 &&
            is_pci_address(pci))
                strcpy(d->pci, pci);
        if (d->pci[0]) {
                char path[128];

                snprintf(path, sizeof(path), "class/infiniband/%s/device", name);
                pcie_link_read(s->root, path, &d->pcie);
        } else {
                d->pcie = (struct pcie_link){ .aer_fatal_since_start = -1, .aer_fatal_since_last = -1 };
        }
        r = rdma_scan_list_indexes(s, "ports", "ports", "port number", &ports, &n);
        if (r < 0) {
                if (r == -ENOMEM)
                        s->r = r;
                else
                        rdma_scan_warn(s, "cannot read its ports: %s (expected ports/1, ...)", strerror(-r));
                return;
        }
        d->ports = calloc(n + 1, sizeof(*d->ports));
        if (!d->ports) {
                s->r = -ENOMEM;
                return;
        }
        for (size_t i = 0; i < n && s->r == 0; i++)
                port_read(s, ports[i], &d->ports[d->n_ports++]);
}

static void pair_twins(struct rdma_inventory *inv)
{
        for (size_t i = 0; i < inv->n; i++) {
                for (size_t k = i + 1; k < inv->n; k++) {
                        struct rdma_device *a = &inv->v[i], *b = &inv->v[k];

                        /* The two functions of one Spark QSFP port; each keeps the first twin it
                         * gets, so pairs stay symmetric. */
                        if (a->twin[0] || b->twin[0] || !netif_pci_are_twins(a->pci, b->pci))
                                continue;
                        snprintf(a->twin, sizeof(a->twin), "%s", b->name);
                        snprintf(b->twin, sizeof(b->twin), "%s", a->name);
                }
        }
}

int rdma_scan(const char *sysfs_root, bool use_verbs, struct rdma_inventory *out)
{
        struct rdma_inventory inv = { 0 };
        struct rdma_scan s = { .root = sysfs_root, .inv = &inv };
        char **names = NULL, q[48];
        int r;

        *out = (struct rdma_inventory){ 0 };
        inv.warnings = calloc(1, sizeof(char *));
        if (!inv.warnings)
                return -ENOMEM;
        r = sysfs_list(sysfs_root, &names, "class/infiniband");
        if (r == -ENOMEM) {
                s.r = r;
        } else if (r == -ENOENT) {
                /* No RDMA driver loaded: nothing to list, and nothing wrong with sysfs. */
        } else if (r < 0) {
                rdma_scan_warn(&s, "cannot list class/infiniband: %s", strerror(-r));
        } else {
                inv.v = calloc((size_t)r + 1, sizeof(*inv.v));
                if (!inv.v)
                        s.r = -ENOMEM;
                for (char **name = names; inv.v && *name && s.r == 0; name++) {
                        if (strlen(*name) >= sizeof(inv.v->name)) {
                                rdma_scan_warn(&s, "class/infiniband/%s: name too long for an RDMA device",
                                               rdma_scan_quote(*name, q, sizeof(q)));
                                continue;
                        }
                        device_read(&s, *name, &inv.v[inv.n++]);
                        s.dev = NULL;
                }
        }
        strv_free(names);
        if (s.r == 0) {
                pair_twins(&inv);
                if (use_verbs)
                        s.r = rdma_verbs_enrich(&inv);
        }
        if (s.r < 0) {
                rdma_inventory_free(&inv);
                return s.r;
        }
        *out = inv;
        return 0;
}

void rdma_inventory_free(struct rdma_inventory *inv)
{
        for (size_t i = 0; i < inv->n; i++) {
                for (size_t k = 0; k < inv->v[i].n_ports; k++)
                        free(inv->v[i].ports[k].gids);
                free(inv->v[i].ports);
        }
        free(inv->v);
        strv_free(inv->warnings);
        *inv = (struct rdma_inventory){ 0 };
}

const struct rdma_device *rdma_find_device(const struct rdma_inventory *inv, const char *name)
{
        for (size_t i = 0; i < inv->n; i++)
                if (strcmp(inv->v[i].name, name) == 0)
                        return &inv->v[i];
        return NULL;
}

const struct rdma_port *rdma_find_port_by_netdev(const struct rdma_inventory *inv, const char *ifname,
                                                 const struct rdma_device **device)
{
        if (device)
                *device = NULL;
        if (!ifname || !ifname[0])
                return NULL; /* "" is every netdev-less port's netdev, not a name */
        for (size_t i = 0; i < inv->n; i++) {
                for (size_t k = 0; k < inv->v[i].n_ports; k++) {
                        if (strcmp(inv->v[i].ports[k].netdev, ifname) != 0)
                                continue;
                        if (device)
                                *device = &inv->v[i];
                        return &inv->v[i].ports[k];
                }
        }
        return NULL;
}

static json_object *port_to_json(const struct rdma_port *p)
{
        json_object *o = json_object_new_object(), *gids = json_object_new_array();

        json_object_object_add(o, "port", json_object_new_int64(p->num));
        json_object_object_add(o, "state", json_object_new_string(p->state_name));
        json_object_object_add(o, "state_num", json_object_new_int64(p->state));
        json_object_object_add(o, "phys_state", json_object_new_string(p->phys_state_name));
        json_object_object_add(o, "phys_state_num", json_object_new_int64(p->phys_state));
        json_object_object_add(o, "link_layer", json_object_new_string(p->link_layer));
        json_object_object_add(o, "rate", json_object_new_string(p->rate));
        json_object_object_add(o, "rate_gbps", json_object_new_int64(p->rate_gbps));
        json_object_object_add(o, "active_mtu", p->active_mtu ? json_object_new_int64(p->active_mtu) : NULL);
        json_object_object_add(o, "netdev", json_object_new_string(p->netdev));
        json_object_object_add(o, "netdev_speed_mbps",
                               p->netdev_speed_mbps > 0 ? json_object_new_int64(p->netdev_speed_mbps)
                                                        : NULL);
        json_object_object_add(o, "roce_v2_ipv4_gid",
                               p->roce_v2_ipv4_gid >= 0 ? json_object_new_int(p->roce_v2_ipv4_gid) : NULL);
        for (size_t i = 0; i < p->n_gids; i++)
                json_object_array_add(gids, rdma_gid_to_json(&p->gids[i]));
        json_object_object_add(o, "gids", gids);
        return o;
}

json_object *rdma_inventory_to_json(const struct rdma_inventory *inv)
{
        json_object *o = json_object_new_object(), *devices = json_object_new_array(),
                    *warnings = json_object_new_array();

        for (size_t i = 0; i < inv->n; i++) {
                const struct rdma_device *d = &inv->v[i];
                json_object *dev = json_object_new_object(), *ports = json_object_new_array();

                json_object_object_add(dev, "name", json_object_new_string(d->name));
                json_object_object_add(dev, "pci", json_object_new_string(d->pci));
                json_object_object_add(dev, "twin", json_object_new_string(d->twin));
                json_object_object_add(dev, "pcie", pcie_link_to_json(&d->pcie));
                for (size_t k = 0; k < d->n_ports; k++)
                        json_object_array_add(ports, port_to_json(&d->ports[k]));
                json_object_object_add(dev, "ports", ports);
                json_object_array_add(devices, dev);
        }
        for (char **w = inv->warnings; w && *w; w++)
                json_object_array_add(warnings, json_object_new_string(*w));
        json_object_object_add(o, "devices", devices);
        json_object_object_add(o, "warnings", warnings);
        json_object_object_add(o, "verbs_used", json_object_new_boolean(inv->verbs_used));
        json_object_object_add(o, "verbs_error", json_object_new_string(inv->verbs_error));
        return o;
}
