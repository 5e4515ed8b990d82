/* The management address: the source of the IPv4 default route. */
#include "mgmt_address.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/macro.h"

#define RTF_UP_FLAG 0x0001

int mgmt_route_parse(FILE *route, char ifname[IF_NAMESIZE], uint32_t *gateway)
{
        unsigned long best_metric = 0;
        char line[512];
        bool found = false;

        while (fgets(line, sizeof(line), route)) {
                char name[IF_NAMESIZE + 1];
                unsigned long dest, gw, flags, refcnt, use, metric, mask;

                if (sscanf(line, "%16s %lx %lx %lx %lu %lu %lu %lx", name, &dest, &gw, &flags, &refcnt, &use,
                           &metric, &mask) != 8)
                        continue; /* the header line */
                if (dest != 0 || mask != 0 || !(flags & RTF_UP_FLAG) || strlen(name) >= IF_NAMESIZE)
                        continue;
                if (found && metric >= best_metric)
                        continue;
                found = true;
                best_metric = metric;
                memcpy(ifname, name, strlen(name) + 1);
                /* /proc/net/route writes the address as the kernel holds it (network order) in hex. */
                *gateway = (uint32_t)gw;
        }
        return found ? 0 : -ENOENT;
}

/* ifname's IPv4 address and prefix: the one equal to want when want is not 0, else the first. */
static int address_of(const char *ifname, uint32_t want, struct mgmt_address *out)
{
        struct ifaddrs *list, *i;
        int r = -ENOENT;

        if (getifaddrs(&list) < 0)
                return -errno;
        for (i = list; i; i = i->ifa_next) {
                const struct sockaddr_in *a = (const struct sockaddr_in *)i->ifa_addr,
                                         *m = (const struct sockaddr_in *)i->ifa_netmask;
                char text[INET_ADDRSTRLEN];
                int prefix;

                if (!a || a->sin_family != AF_INET || strcmp(i->ifa_name, ifname) != 0 ||
                    (want && a->sin_addr.s_addr != want))
                        continue;
                prefix = m ? __builtin_popcount(m->sin_addr.s_addr) : 32;
                inet_ntop(AF_INET, &a->sin_addr, text, sizeof(text));
                snprintf(out->address, sizeof(out->address), "%s/%d", text, prefix);
                snprintf(out->ifname, sizeof(out->ifname), "%s", ifname);
                r = 0;
                break;
        }
        freeifaddrs(list);
        return r;
}

int mgmt_address_read(const char *route_path, struct mgmt_address *out)
{
        _cleanup_fclose_ FILE *f = fopen(route_path, "re");
        _cleanup_close_ int fd = -1;
        char ifname[IF_NAMESIZE];
        uint32_t gateway = 0;
        struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) }, from;
        socklen_t len = sizeof(from);
        int r;

        *out = (struct mgmt_address){ 0 };
        if (!f)
                return -errno;
        if ((r = mgmt_route_parse(f, ifname, &gateway)) < 0)
                return r;
        if (!gateway)
                return address_of(ifname, 0, out);
        /* The kernel's source for the gateway: connect() on a UDP socket only looks the route up. */
        fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        to.sin_addr.s_addr = gateway;
        if (connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0 ||
            getsockname(fd, (struct sockaddr *)&from, &len) < 0)
                return -errno;
        r = address_of(ifname, from.sin_addr.s_addr, out);
        return r == -ENOENT ? address_of(ifname, 0, out) : r;
}
