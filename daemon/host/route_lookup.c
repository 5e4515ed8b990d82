/* A route lookup by the kernel, through a connected UDP socket. */
#include "route_lookup.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "common/macro.h"

int route_lookup(const char *ipv4, struct route_lookup *out)
{
        struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) }, from;
        socklen_t len = sizeof(from);
        _cleanup_close_ int fd = -1;
        struct ifaddrs *list;

        *out = (struct route_lookup){ 0 };
        if (inet_pton(AF_INET, ipv4, &to.sin_addr) != 1)
                return -EINVAL;
        fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0 ||
            getsockname(fd, (struct sockaddr *)&from, &len) < 0)
                return -errno;
        inet_ntop(AF_INET, &from.sin_addr, out->source, sizeof(out->source));
        if (getifaddrs(&list) < 0)
                return 0;
        for (struct ifaddrs *i = list; i; i = i->ifa_next) {
                const struct sockaddr_in *a = (const struct sockaddr_in *)i->ifa_addr;

                if (a && a->sin_family == AF_INET && a->sin_addr.s_addr == from.sin_addr.s_addr) {
                        snprintf(out->ifname, sizeof(out->ifname), "%s", i->ifa_name);
                        break;
                }
        }
        freeifaddrs(list);
        return 0;
}
