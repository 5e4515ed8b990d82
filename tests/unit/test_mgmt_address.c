/*
 * The management address's default route, read from /proc/net/route's text: the one with the
 * lowest metric, its gateway in the kernel's byte order; none when no default route is up.
 * And the route lookup on loopback: a source for 127.0.0.1, a refusal for what is not an address.
 */
#include <arpa/inet.h>
#include <errno.h>

#include "daemon/host/mgmt_address.h"
#include "daemon/host/route_lookup.h"
#include "test.h"

static int parse(const char *text, char ifname[IF_NAMESIZE], uint32_t *gateway)
{
        FILE *f = fmemopen((void *)text, strlen(text), "r");
        int r = mgmt_route_parse(f, ifname, gateway);

        fclose(f);
        return r;
}

static void test_lowest_metric(void)
{
        char ifname[IF_NAMESIZE] = "";
        uint32_t gateway = 0;
        struct in_addr want;

        /* Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT */
        CHECK(parse("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
                    "wlan0\t00000000\t0101A8C0\t0003\t0\t0\t600\t00000000\t0\t0\t0\n"
                    "enP7s7\t00000000\tFE01A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
                    "enP7s7\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n",
                    ifname, &gateway) == 0);
        CHECK_STREQ(ifname, "enP7s7");
        inet_pton(AF_INET, "192.168.1.254", &want);
        CHECK(gateway == want.s_addr);
}

static void test_none(void)
{
        char ifname[IF_NAMESIZE] = "";
        uint32_t gateway = 0;

        /* A default route that is not up, and a subnet route: no default route. */
        CHECK(parse("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\n"
                    "eth0\t00000000\tFE01A8C0\t0002\t0\t0\t100\t00000000\n"
                    "eth0\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\n",
                    ifname, &gateway) == -ENOENT);
        CHECK(parse("", ifname, &gateway) == -ENOENT);
}

static void test_route_lookup(void)
{
        struct route_lookup r;

        CHECK(route_lookup("127.0.0.1", &r) == 0);
        CHECK_STREQ(r.source, "127.0.0.1");
        CHECK_STREQ(r.ifname, "lo");
        CHECK(route_lookup("spark1", &r) == -EINVAL);
}

int main(void)
{
        RUN(test_lowest_metric);
        RUN(test_none);
        RUN(test_route_lookup);
        return test_result();
}
