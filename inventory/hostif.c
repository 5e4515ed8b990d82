#include "hostif.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "sysfs.h"

#define IFF_LOOPBACK_FLAG 0x8 /* include/uapi/linux/if.h */
#define RTF_UP_FLAG       0x1 /* include/uapi/linux/route.h */

const char *hostif_kind_to_string(enum hostif_kind kind)
{
        switch (kind) {
        case HOSTIF_WIRELESS:
                return "wireless";
        case HOSTIF_BRIDGE:
                return "bridge";
        case HOSTIF_VIRTUAL:
                return "virtual";
        case HOSTIF_LOOPBACK:
                return "loopback";
        default:
                return "physical";
        }
}

int hostif_classify(const char *sysfs_root, const char *name, enum hostif_kind *out)
{
        char target[PATH_MAX];
        uint64_t flags;
        int r;

        /* class/net also holds files (bonding_masters): only directories are netdevs. */
        if (!sysfs_exists(sysfs_root, "class/net/%s/", name))
                return -ENOENT;
        if (sysfs_read_u64(sysfs_root, &flags, "class/net/%s/flags", name) == 0 &&
            (flags & IFF_LOOPBACK_FLAG)) {
                *out = HOSTIF_LOOPBACK;
                return 0;
        }
        if (sysfs_exists(sysfs_root, "class/net/%s/wireless", name) ||
            sysfs_exists(sysfs_root, "class/net/%s/phy80211", name)) {
                *out = HOSTIF_WIRELESS;
                return 0;
        }
        if (sysfs_exists(sysfs_root, "class/net/%s/bridge", name)) {
                *out = HOSTIF_BRIDGE;
                return 0;
        }
        r = sysfs_link_target(sysfs_root, target, sizeof(target), "class/net/%s", name);
        if (r == 0)
                *out = strstr(target, "devices/virtual/") ? HOSTIF_VIRTUAL : HOSTIF_PHYSICAL;
        else /* not a link, as the kernel never shows it: a device behind it makes it physical */
                *out = sysfs_exists(sysfs_root, "class/net/%s/device", name) ? HOSTIF_PHYSICAL
                                                                             : HOSTIF_VIRTUAL;
        return 0;
}

const struct hostif *hostif_list_find(const struct hostif_list *list, const char *name)
{
        for (size_t i = 0; i < list->n; i++)
                if (strcmp(list->v[i].name, name) == 0)
                        return &list->v[i];
        return NULL;
}

/* /proc/net/route: "Iface Destination Gateway Flags RefCnt Use Metric Mask ...", hex in host order. */
static int read_default_routes(const char *host_root, struct hostif_list *list)
{
        char path[PATH_MAX], line[512];
        const char *sep = host_root[strlen(host_root) - 1] == '/' ? "" : "/";
        _cleanup_fclose_ FILE *f = NULL;

        if ((size_t)snprintf(path, sizeof(path), "%s%sproc/net/route", host_root, sep) >= sizeof(path))
                return -ENAMETOOLONG;
        f = fopen(path, "re");
        if (!f)
                return errno == ENOENT ? 0 : -errno;
        while (fgets(line, sizeof(line), f)) {
                char ifname[IF_NAMESIZE + 1];
                unsigned long dest, gateway, flags, refcnt, use, metric, mask;
                struct hostif *h;

                if (sscanf(line, "%16s %lx %lx %lx %lu %lu %lu %lx", ifname, &dest, &gateway, &flags,
                           &refcnt, &use, &metric, &mask) != 8)
                        continue; /* the header line */
                if (dest != 0 || mask != 0 || !(flags & RTF_UP_FLAG))
                        continue;
                h = (struct hostif *)hostif_list_find(list, ifname);
                if (!h)
                        continue;
                if (!h->has_default_route || metric < h->route_metric)
                        h->route_metric = metric;
                h->has_default_route = true;
        }
        return 0;
}

int hostif_scan(const char *host_root, struct hostif_list *out)
{
        char sysfs[PATH_MAX];
        const char *sep = host_root[strlen(host_root) - 1] == '/' ? "" : "/";
        _cleanup_strv_ char **names = NULL;
        int n, r;

        *out = (struct hostif_list){ 0 };
        if ((size_t)snprintf(sysfs, sizeof(sysfs), "%s%ssys", host_root, sep) >= sizeof(sysfs))
                return -ENAMETOOLONG;
        n = sysfs_list(sysfs, &names, "class/net");
        if (n < 0)
                return n;
        out->v = calloc((size_t)n + 1, sizeof(*out->v));
        if (!out->v)
                return -ENOMEM;
        for (int i = 0; i < n; i++) {
                struct hostif *h = &out->v[out->n];

                if (strlen(names[i]) >= sizeof(h->name) || hostif_classify(sysfs, names[i], &h->kind) < 0)
                        continue;
                snprintf(h->name, sizeof(h->name), "%s", names[i]);
                out->n++;
        }
        r = read_default_routes(host_root, out);
        if (r < 0) {
                hostif_list_free(out);
                return r;
        }
        return 0;
}

void hostif_list_free(struct hostif_list *list)
{
        free(list->v);
        *list = (struct hostif_list){ 0 };
}
