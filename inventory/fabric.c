#include "fabric.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"

int fabric_facts_read(const char *host_root, char *const *patterns, bool use_verbs, struct fabric_facts *out)
{
        char sysfs[PATH_MAX];
        const char *sep = host_root[strlen(host_root) - 1] == '/' ? "" : "/";
        int r;

        *out = (struct fabric_facts){ .memlock_daemon = 0, .daemon_machine = elf_machine_self() };
        if ((size_t)snprintf(sysfs, sizeof(sysfs), "%s%ssys", host_root, sep) >= sizeof(sysfs))
                return -ENAMETOOLONG;
        r = netif_scan(sysfs, patterns, &out->netifs);
        if (r < 0 && r != -ENOENT)
                goto fail;
        r = hostif_scan(host_root, &out->hostifs);
        if (r < 0 && r != -ENOENT)
                goto fail;
        r = rdma_scan(sysfs, use_verbs, &out->rdma);
        if (r < 0)
                goto fail;
        r = port_counters_scan(sysfs, NULL, &out->counters);
        if (r < 0)
                goto fail;
        r = hostfacts_read(host_root, &out->host);
        if (r < 0)
                goto fail;
        r = netprofiles_read(host_root, &out->profiles);
        if (r < 0)
                goto fail;
        return 0;
fail:
        fabric_facts_free(out);
        return r;
}

void fabric_facts_free(struct fabric_facts *f)
{
        netif_list_free(&f->netifs);
        hostif_list_free(&f->hostifs);
        rdma_inventory_free(&f->rdma);
        port_counter_list_free(&f->counters);
        hostfacts_free(&f->host);
        netprofiles_free(&f->profiles);
        free(f->addresses);
        free(f->sysctls);
        json_object_put(f->peers);
        json_object_put(f->rail_verdicts);
        json_object_put(f->software_nodes);
        json_object_put(f->firewall);
        free(f->lldpd_status);
        json_object_put(f->topology);
        json_object_put(f->name_clashes);
        *f = (struct fabric_facts){ 0 };
}

int fabric_facts_add_address(struct fabric_facts *f, const char *ifname, const char *address)
{
        struct fabric_address *v = realloc(f->addresses, (f->n_addresses + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        f->addresses = v;
        v = &v[f->n_addresses++];
        snprintf(v->ifname, sizeof(v->ifname), "%s", ifname);
        snprintf(v->address, sizeof(v->address), "%s", address);
        return 0;
}

/* The inventories' own lookups, on facts this function may change. */
static struct rdma_device *find_rdma_device(struct fabric_facts *f, const char *name)
{
        return (struct rdma_device *)rdma_find_device(&f->rdma, name);
}

static struct netif *find_netif(struct fabric_facts *f, const char *name)
{
        return name[0] ? (struct netif *)netif_list_find(&f->netifs, name) : NULL;
}

/* The first netdev among the device's ports: a Spark half and an rxe device have one port. */
static struct netif *rdma_device_netif(struct fabric_facts *f, const struct rdma_device *d)
{
        for (size_t i = 0; i < d->n_ports; i++) {
                struct netif *n = find_netif(f, d->ports[i].netdev);

                if (n)
                        return n;
        }
        return NULL;
}

static void unpair_rdma(struct fabric_facts *f, struct rdma_device *d)
{
        struct rdma_device *old = d->twin[0] ? find_rdma_device(f, d->twin) : NULL;

        if (old && strcmp(old->twin, d->name) == 0)
                old->twin[0] = '\0';
        d->twin[0] = '\0';
}

static void unpair_netif(struct fabric_facts *f, struct netif *n)
{
        struct netif *old = n->twin[0] ? find_netif(f, n->twin) : NULL;

        if (old && strcmp(old->twin, n->name) == 0)
                old->twin[0] = '\0';
        n->twin[0] = '\0';
}

int fabric_facts_pair_twins(struct fabric_facts *f, const char *dev_a, const char *dev_b)
{
        struct rdma_device *a = find_rdma_device(f, dev_a), *b = find_rdma_device(f, dev_b);
        struct netif *na, *nb;

        if (strcmp(dev_a, dev_b) == 0)
                return -EINVAL;
        if (!a || !b) {
                char line[256];
                int r;

                snprintf(line, sizeof(line),
                         "[probe] rdma_twins names %s, which is not an RDMA device of this node; twins "
                         "are paired by PCI address instead",
                         a ? dev_b : dev_a);
                r = strv_push(&f->rdma.warnings, line);
                return r < 0 ? r : -ENOENT;
        }
        unpair_rdma(f, a);
        unpair_rdma(f, b);
        snprintf(a->twin, sizeof(a->twin), "%s", b->name);
        snprintf(b->twin, sizeof(b->twin), "%s", a->name);
        na = rdma_device_netif(f, a);
        nb = rdma_device_netif(f, b);
        if (!na || !nb || na == nb)
                return 0;
        unpair_netif(f, na);
        unpair_netif(f, nb);
        snprintf(na->twin, sizeof(na->twin), "%s", nb->name);
        snprintf(nb->twin, sizeof(nb->twin), "%s", na->name);
        return 0;
}

int fabric_facts_add_sysctl(struct fabric_facts *f, const char *name, const char *wanted, const char *actual)
{
        struct fabric_sysctl *v = realloc(f->sysctls, (f->n_sysctls + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        f->sysctls = v;
        v = &v[f->n_sysctls++];
        snprintf(v->name, sizeof(v->name), "%s", name);
        snprintf(v->wanted, sizeof(v->wanted), "%s", wanted);
        snprintf(v->actual, sizeof(v->actual), "%s", actual ? actual : "");
        return 0;
}

int fabric_facts_load_addresses(struct fabric_facts *f, const char *path)
{
        _cleanup_fclose_ FILE *file = fopen(path, "re");
        char line[256];

        if (!file)
                return -errno;
        while (fgets(line, sizeof(line), file)) {
                char ifname[IF_NAMESIZE + 1], address[64];
                int r;

                if (line[0] == '#' || sscanf(line, "%16s %63s", ifname, address) != 2)
                        continue;
                r = fabric_facts_add_address(f, ifname, address);
                if (r < 0)
                        return r;
        }
        return 0;
}

bool fabric_has_address(const struct fabric_facts *f, const char *ifname)
{
        for (size_t i = 0; i < f->n_addresses; i++)
                if (strcmp(f->addresses[i].ifname, ifname) == 0)
                        return true;
        return false;
}

const char *fabric_ipv4_of(const struct fabric_facts *f, const char *ifname, char *buf, size_t size)
{
        for (size_t i = 0; i < f->n_addresses; i++) {
                const char *a = f->addresses[i].address;
                size_t n;

                if (strcmp(f->addresses[i].ifname, ifname) != 0 || strchr(a, ':'))
                        continue;
                n = strcspn(a, "/");
                if (n >= size)
                        continue;
                memcpy(buf, a, n);
                buf[n] = '\0';
                return buf;
        }
        return NULL;
}

static json_object *addresses_to_json(const struct fabric_facts *f, const char *ifname)
{
        json_object *addrs = json_object_new_array();

        for (size_t k = 0; k < f->n_addresses; k++)
                if (strcmp(f->addresses[k].ifname, ifname) == 0)
                        json_object_array_add(addrs, json_object_new_string(f->addresses[k].address));
        return addrs;
}

static json_object *hostifs_to_json(const struct fabric_facts *f)
{
        json_object *a = json_object_new_array();

        for (size_t i = 0; i < f->hostifs.n; i++) {
                const struct hostif *h = &f->hostifs.v[i];
                json_object *j = json_object_new_object();

                json_object_object_add(j, "name", json_object_new_string(h->name));
                json_object_object_add(j, "kind", json_object_new_string(hostif_kind_to_string(h->kind)));
                json_object_object_add(j, "addresses", addresses_to_json(f, h->name));
                json_object_object_add(j, "default_route", json_object_new_boolean(h->has_default_route));
                json_object_array_add(a, j);
        }
        return a;
}

json_object *fabric_facts_to_json(const struct fabric_facts *f)
{
        json_object *o = json_object_new_object(), *netifs = json_object_new_array();

        for (size_t i = 0; i < f->netifs.n; i++) {
                const struct netif *n = &f->netifs.v[i];
                json_object *j = json_object_new_object(), *devs = json_object_new_array();

                for (char **d = n->rdma_devices; d && *d; d++)
                        json_object_array_add(devs, json_object_new_string(*d));
                json_object_object_add(j, "name", json_object_new_string(n->name));
                json_object_object_add(j, "rdma_devices", devs);
                json_object_object_add(j, "twin", n->twin[0] ? json_object_new_string(n->twin) : NULL);
                json_object_object_add(j, "pci", n->pci[0] ? json_object_new_string(n->pci) : NULL);
                json_object_object_add(j, "operstate", json_object_new_string(n->operstate));
                json_object_object_add(j, "mtu", n->mtu ? json_object_new_int((int)n->mtu) : NULL);
                json_object_object_add(j, "speed_mbps",
                                       n->speed_mbps > 0 ? json_object_new_int64(n->speed_mbps) : NULL);
                json_object_object_add(j, "addresses", addresses_to_json(f, n->name));
                json_object_array_add(netifs, j);
        }
        json_object_object_add(o, "netdevs", netifs);
        if (f->netifs.warnings) {
                json_object *warnings = json_object_new_array();

                for (char **w = f->netifs.warnings; *w; w++)
                        json_object_array_add(warnings, json_object_new_string(*w));
                json_object_object_add(o, "netdev_warnings", warnings);
        }
        json_object_object_add(o, "host_interfaces", hostifs_to_json(f));
        json_object_object_add(o, "rdma", rdma_inventory_to_json(&f->rdma));
        json_object_object_add(o, "host", hostfacts_to_json(&f->host));
        if (f->memlock_daemon == HOSTFACTS_UNLIMITED)
                json_object_object_add(o, "memlock_daemon", json_object_new_string("unlimited"));
        else
                json_object_object_add(o, "memlock_daemon",
                                       json_object_new_int64((int64_t)f->memlock_daemon));
        json_object_object_add(o, "daemon_under_systemd",
                               json_object_new_boolean(f->is_daemon_under_systemd));
        return o;
}
