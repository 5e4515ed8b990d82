#include "netif.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "sysfs.h"

/* Splits "DDDD:BB:DD.F" into the domain and the rest; false when it is not a PCI address. */
static bool pci_split(const char *addr, unsigned *domain, const char **rest)
{
        unsigned d, bus, dev, fn;
        int n = 0;

        /* sscanf alone would take blanks, signs and 0x; sysfs writes none of them. */
        if (!isxdigit((unsigned char)addr[0]) || addr[strspn(addr, "0123456789abcdef:.")])
                return false;
        if (sscanf(addr, "%x:%x:%x.%x%n", &d, &bus, &dev, &fn, &n) != 4 || addr[n] != '\0')
                return false;
        *domain = d;
        *rest = strchr(addr, ':') + 1;
        return true;
}

bool netif_pci_are_twins(const char *a, const char *b)
{
        unsigned da, db;
        const char *ra, *rb;

        if (!pci_split(a, &da, &ra) || !pci_split(b, &db, &rb))
                return false;
        return da != db && strcmp(ra, rb) == 0;
}

bool netif_name_matches(char *const *patterns, const char *name)
{
        for (char *const *p = patterns; p && *p; p++)
                if (fnmatch(*p, name, 0) == 0)
                        return true;
        return false;
}

static void netif_clear(struct netif *n)
{
        strv_free(n->rdma_devices);
        n->rdma_devices = NULL;
}

/* The RDMA devices that run over a netdev without being its PCI function's (soft-RoCE: rxe and
 * siw have no parent device, so class/net/IF/device/infiniband never names them): "NETDEV DEV"
 * pairs from each port's GID 0 netdev, where ibdev2netdev and `rdma link` find it, and from the
 * soft device's parent attribute, which stays while the netdev is down and its GIDs are gone. */
static int rdma_netdev_pairs(const char *root, char ***pairs)
{
        _cleanup_strv_ char **devs = NULL;
        int r;

        *pairs = calloc(1, sizeof(char *));
        if (!*pairs)
                return -ENOMEM;
        r = sysfs_list(root, &devs, "class/infiniband");
        if (r < 0)
                return r == -ENOMEM ? r : 0; /* no RDMA driver loaded, or nothing to read */
        for (char **dev = devs; r >= 0 && *dev; dev++) {
                _cleanup_strv_ char **ports = NULL;
                char netdev[IF_NAMESIZE + 1], pair[2 * NAME_MAX + 2];

                if (sysfs_read(root, netdev, sizeof(netdev), "class/infiniband/%s/parent", *dev) == 0 &&
                    netdev[0]) {
                        snprintf(pair, sizeof(pair), "%s %s", netdev, *dev);
                        if ((r = strv_push(pairs, pair)) < 0)
                                break;
                }
                if ((r = sysfs_list(root, &ports, "class/infiniband/%s/ports", *dev)) == -ENOMEM)
                        break;
                r = 0;
                for (char **port = ports; r >= 0 && port && *port; port++) {
                        if (sysfs_read(root, netdev, sizeof(netdev),
                                       "class/infiniband/%s/ports/%s/gid_attrs/ndevs/0", *dev, *port) < 0 ||
                            !netdev[0])
                                continue;
                        snprintf(pair, sizeof(pair), "%s %s", netdev, *dev);
                        if (!strv_contains(*pairs, pair))
                                r = strv_push(pairs, pair);
                }
        }
        if (r < 0) {
                strv_free(*pairs);
                *pairs = NULL;
        }
        return r < 0 ? r : 0;
}

/* Adds to n's RDMA devices those of pairs that run over it, each once. */
static int netif_add_rdma_pairs(struct netif *n, char *const *pairs)
{
        size_t len = strlen(n->name);

        for (char *const *p = pairs; p && *p; p++) {
                const char *dev = *p + len + 1;

                if (strncmp(*p, n->name, len) != 0 || (*p)[len] != ' ' ||
                    strv_contains(n->rdma_devices, dev))
                        continue;
                int r = strv_push(&n->rdma_devices, dev);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int netif_read(const char *root, const char *name, char *const *rdma_pairs, struct netif *n)
{
        uint64_t v;
        char buf[64];
        int r;

        *n = (struct netif){ .speed_mbps = -1 };
        snprintf(n->name, sizeof(n->name), "%s", name);

        r = sysfs_read_u64(root, &v, "class/net/%s/ifindex", name);
        if (r < 0)
                return r; /* gone, or not a netdev directory */
        n->ifindex = (int)v;
        if (sysfs_read_u64(root, &v, "class/net/%s/mtu", name) == 0)
                n->mtu = (unsigned)v;
        if (sysfs_read_u64(root, &v, "class/net/%s/flags", name) == 0)
                n->is_admin_up = v & 0x1; /* IFF_UP */
        /* carrier cannot be read while the link is administratively down (EINVAL): no carrier. */
        if (sysfs_read_u64(root, &v, "class/net/%s/carrier", name) == 0)
                n->has_carrier = v == 1;
        if (sysfs_read(root, n->operstate, sizeof(n->operstate), "class/net/%s/operstate", name) < 0)
                snprintf(n->operstate, sizeof(n->operstate), "unknown");
        if (sysfs_read(root, n->mac, sizeof(n->mac), "class/net/%s/address", name) < 0)
                n->mac[0] = '\0';
        /* speed is -1 or unreadable while down; only a positive number is a speed. */
        if (sysfs_read(root, buf, sizeof(buf), "class/net/%s/speed", name) == 0 && buf[0] >= '1' &&
            buf[0] <= '9')
                n->speed_mbps = strtoll(buf, NULL, 10);
        if (sysfs_read_u64(root, &v, "class/net/%s/dev_port", name) == 0 && v < 256)
                n->dev_port = (int)v;
        if (sysfs_link_name(root, buf, sizeof(buf), "class/net/%s/device", name) == 0) {
                unsigned domain;
                const char *rest;

                if (pci_split(buf, &domain, &rest))
                        snprintf(n->pci, sizeof(n->pci), "%s", buf);
        }
        r = sysfs_list(root, &n->rdma_devices, "class/net/%s/device/infiniband", name);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                n->rdma_devices = calloc(1, sizeof(char *));
                if (!n->rdma_devices)
                        return -ENOMEM;
        }
        return netif_add_rdma_pairs(n, rdma_pairs);
}

static void netif_pair_twins(struct netif_list *list)
{
        for (size_t i = 0; i < list->n; i++) {
                for (size_t k = i + 1; k < list->n; k++) {
                        struct netif *a = &list->v[i], *b = &list->v[k];

                        /* Twins are the two RDMA functions of one port: a netdev without an RDMA
                         * device (a configured management port) is nobody's twin, and a netdev
                         * keeps the first twin it gets so pairs stay symmetric. */
                        if (!a->rdma_devices[0] || !b->rdma_devices[0] || a->twin[0] || b->twin[0])
                                continue;
                        if (!a->pci[0] || !b->pci[0] || !netif_pci_are_twins(a->pci, b->pci))
                                continue;
                        snprintf(a->twin, sizeof(a->twin), "%s", b->name);
                        snprintf(b->twin, sizeof(b->twin), "%s", a->name);
                }
        }
}

int netif_scan(const char *root, char *const *patterns, struct netif_list *out)
{
        char **names = NULL;
        _cleanup_strv_ char **rdma_pairs = NULL;
        struct netif_list list = { 0 };
        int r;

        *out = (struct netif_list){ 0 };
        r = rdma_netdev_pairs(root, &rdma_pairs);
        if (r < 0)
                return r;
        r = sysfs_list(root, &names, "class/net");
        if (r < 0)
                return r;
        list.v = calloc(strv_length(names) + 1, sizeof(struct netif));
        if (!list.v) {
                strv_free(names);
                return -ENOMEM;
        }
        for (char **name = names; *name; name++) {
                struct netif *n = &list.v[list.n];

                r = netif_read(root, *name, rdma_pairs, n);
                if (r == -ENOMEM)
                        break;
                if (r == -EBADMSG) {
                        /* Not a vanished netdev but one the kernel describes in a way we cannot
                         * read: say so rather than lose it without a word. */
                        char line[IF_NAMESIZE + 64];

                        snprintf(line, sizeof(line), "class/net/%s: ifindex is not a number, left out",
                                 *name);
                        r = strv_push(&list.warnings, line);
                        netif_clear(n);
                        if (r < 0)
                                break;
                        continue;
                }
                if (r < 0) {
                        netif_clear(n);
                        r = 0;
                        continue;
                }
                n->is_configured = netif_name_matches(patterns, n->name);
                if (!n->is_configured && strv_length(n->rdma_devices) == 0) {
                        netif_clear(n);
                        continue;
                }
                list.n++;
        }
        strv_free(names);
        if (r < 0) {
                netif_list_free(&list);
                return r;
        }
        netif_pair_twins(&list);
        *out = list;
        return 0;
}

void netif_list_free(struct netif_list *list)
{
        for (size_t i = 0; i < list->n; i++)
                netif_clear(&list->v[i]);
        free(list->v);
        strv_free(list->warnings);
        *list = (struct netif_list){ 0 };
}

const struct netif *netif_list_find(const struct netif_list *list, const char *name)
{
        for (size_t i = 0; i < list->n; i++)
                if (strcmp(list->v[i].name, name) == 0)
                        return &list->v[i];
        return NULL;
}
