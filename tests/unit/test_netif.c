/* The fabric interface inventory over the sysfs fixture trees in tests/fixtures/hosts (see its
 * README.md for which field notes each tree models). */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "inventory/netif.h"
#include "test.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must name tests/fixtures/hosts (meson passes it)"
#endif

/* One expected inventory entry, in the order the tables below give them; rdma is the device
 * names joined with ",", "" for none. */
struct expect {
        const char *name;
        int ifindex;
        const char *rdma;
        const char *pci;
        const char *twin;
        unsigned mtu;
        bool is_admin_up;
        bool has_carrier;
        const char *operstate;
        int64_t speed_mbps;
        bool is_configured;
};

static const char *tree(const char *name)
{
        static char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s/sys", FIXTURES_DIR, name);
        return path;
}

static const char *rdma_joined(const struct netif *n)
{
        static char buf[256];
        size_t used = 0;

        buf[0] = '\0';
        for (char **d = n->rdma_devices; d && *d; d++)
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", used ? "," : "", *d);
        return buf;
}

static void check_netif(const struct netif *got, const struct expect *want)
{
        CHECK_STREQ(got->name, want->name);
        CHECK(got->ifindex == want->ifindex);
        CHECK(got->rdma_devices != NULL);
        CHECK_STREQ(rdma_joined(got), want->rdma);
        CHECK_STREQ(got->pci, want->pci);
        CHECK_STREQ(got->twin, want->twin);
        CHECK(got->mtu == want->mtu);
        CHECK(got->is_admin_up == want->is_admin_up);
        CHECK(got->has_carrier == want->has_carrier);
        CHECK_STREQ(got->operstate, want->operstate);
        CHECK(got->speed_mbps == want->speed_mbps);
        CHECK(got->is_configured == want->is_configured);
}

/* Scans the named fixture tree and compares the whole inventory, in order, with want. */
static void check_scan(const char *name, char *const *patterns, const struct expect *want, size_t n)
{
        struct netif_list list;
        int before = test_failures;

        CHECK(netif_scan(tree(name), patterns, &list) == 0);
        CHECK(list.n == n);
        for (size_t i = 0; i < list.n && i < n; i++) {
                int failed = test_failures;

                check_netif(&list.v[i], &want[i]);
                if (test_failures != failed)
                        fprintf(stderr, "  (entry %zu, %s, expected %s)\n", i, list.v[i].name, want[i].name);
        }
        if (test_failures != before) {
                fprintf(stderr, "  in tree %s, got:", name);
                for (size_t i = 0; i < list.n; i++)
                        fprintf(stderr, " %s", list.v[i].name);
                fprintf(stderr, "\n");
        }
        netif_list_free(&list);
}

/* Seed 001: one cable in the right-hand QSFP port. Both twins of that port are fabric netdevs
 * with MTU 9000 though only enp1s0f1np1 has an address; the other port's twins are down, one
 * without a cable (carrier 0, speed -1) and one administratively down (no carrier, no speed). */
static const struct expect spark_twins[] = {
        { "enP2p1s0f0np0", 4, "roceP2p1s0f0", "0002:01:00.0", "enp1s0f0np0", 1500, false, false, "down", -1,
          false },
        { "enP2p1s0f1np1", 5, "roceP2p1s0f1", "0002:01:00.1", "enp1s0f1np1", 9000, true, true, "up", 200000,
          false },
        { "enp1s0f0np0", 2, "rocep1s0f0", "0000:01:00.0", "enP2p1s0f0np0", 1500, true, false, "down", -1,
          false },
        { "enp1s0f1np1", 3, "rocep1s0f1", "0000:01:00.1", "enP2p1s0f1np1", 9000, true, true, "up", 200000,
          false },
};

static void test_spark_twins(void)
{
        check_scan("spark-twins", NULL, spark_twins, ARRAY_SIZE(spark_twins));
}

static void test_spark_twins_lo_only_when_named(void)
{
        char *patterns[] = { "lo", NULL };
        struct expect want[ARRAY_SIZE(spark_twins) + 1];

        memcpy(want, spark_twins, sizeof(spark_twins));
        want[ARRAY_SIZE(spark_twins)] =
                (struct expect){ "lo", 1, "", "", "", 65536, true, true, "unknown", -1, true };
        check_scan("spark-twins", patterns, want, ARRAY_SIZE(want));
}

/* Seed 002 as it is on its GB10 Sparks: the RDMA network on roceP2p1s0f0 (enP2p1s0f0np0,
 * 192.168.100.1, MTU 9000) and the three other netdevs forced down by the guide's boot service,
 * the active port's own twin enp1s0f0np0 among them. The twins are still the port's halves. */
static void test_spark_one_port(void)
{
        static const struct expect want[] = {
                { "enP2p1s0f0np0", 4, "roceP2p1s0f0", "0002:01:00.0", "enp1s0f0np0", 9000, true, true, "up",
                  200000, false },
                { "enP2p1s0f1np1", 5, "roceP2p1s0f1", "0002:01:00.1", "enp1s0f1np1", 1500, false, false,
                  "down", -1, false },
                { "enp1s0f0np0", 2, "rocep1s0f0", "0000:01:00.0", "enP2p1s0f0np0", 1500, false, false,
                  "down", -1, false },
                { "enp1s0f1np1", 3, "rocep1s0f1", "0000:01:00.1", "enP2p1s0f1np1", 1500, false, false,
                  "down", -1, false },
        };

        check_scan("spark-one-port", NULL, want, ARRAY_SIZE(want));
}

/* Seed 002 on a generic server: a two-port ConnectX in one PCI domain, port 0 up on the RDMA
 * network and port 1 forced down; functions .0 and .1 of one domain are not twins. */
static void test_single_port(void)
{
        static const struct expect want[] = {
                { "enp65s0f0np0", 3, "mlx5_0", "0000:41:00.0", "", 9000, true, true, "up", 100000, false },
                { "enp65s0f1np1", 4, "mlx5_1", "0000:41:00.1", "", 1500, false, false, "down", -1, false },
        };

        check_scan("single-port", NULL, want, ARRAY_SIZE(want));
}

/* Seed 003: node A of a triangle mesh, one 100G link per peer on its own subnet. */
static void test_mesh_two_nics(void)
{
        static const struct expect want[] = {
                { "enP2p1s0f0np0", 5, "roceP2p1s0f0", "0002:01:00.0", "enp1s0f0np0", 1500, true, true, "up",
                  100000, false },
                { "enP2p1s0f1np1", 6, "roceP2p1s0f1", "0002:01:00.1", "enp1s0f1np1", 1500, true, true, "up",
                  100000, false },
                { "enp1s0f0np0", 3, "rocep1s0f0", "0000:01:00.0", "enP2p1s0f0np0", 1500, true, true, "up",
                  100000, false },
                { "enp1s0f1np1", 4, "rocep1s0f1", "0000:01:00.1", "enP2p1s0f1np1", 1500, true, true, "up",
                  100000, false },
        };

        check_scan("mesh-two-nics", NULL, want, ARRAY_SIZE(want));
}

/* Seed 004: mlx5_N names, all four CX-7 functions up at 200G with MTU 9000; the 10G management
 * port enP7s7 has no RDMA device. */
static const struct expect direct_fabric[] = {
        { "enP2p1s0f0np0", 5, "mlx5_2", "0002:01:00.0", "enp1s0f0np0", 9000, true, true, "up", 200000,
          false },
        { "enP2p1s0f1np1", 6, "mlx5_3", "0002:01:00.1", "enp1s0f1np1", 9000, true, true, "up", 200000,
          false },
        { "enp1s0f0np0", 3, "mlx5_0", "0000:01:00.0", "enP2p1s0f0np0", 9000, true, true, "up", 200000,
          false },
        { "enp1s0f1np1", 4, "mlx5_1", "0000:01:00.1", "enP2p1s0f1np1", 9000, true, true, "up", 200000,
          false },
};

static void test_direct_fabric(void)
{
        check_scan("direct-fabric", NULL, direct_fabric, ARRAY_SIZE(direct_fabric));
}

static void test_direct_fabric_management_by_glob(void)
{
        char *patterns[] = { "enP7*", NULL };
        struct expect want[ARRAY_SIZE(direct_fabric) + 1];

        /* enP7s7 sorts between the enP2 and the enp names. At 0007:01:00.0 it shares bus:dev.fn
         * with enp1s0f0np0 in another domain, yet it is nobody's twin: it has no RDMA device. */
        memcpy(want, direct_fabric, 2 * sizeof(direct_fabric[0]));
        want[2] =
                (struct expect){ "enP7s7", 2, "", "0007:01:00.0", "", 9000, true, true, "up", 10000, true };
        memcpy(want + 3, direct_fabric + 2, 2 * sizeof(direct_fabric[0]));
        check_scan("direct-fabric", patterns, want, ARRAY_SIZE(want));
}

static void test_direct_fabric_pattern_marks_fabric_netdev(void)
{
        char *patterns[] = { "enp1s0f0np0", "wlP9s9", NULL };
        struct expect want[ARRAY_SIZE(direct_fabric)];

        memcpy(want, direct_fabric, sizeof(direct_fabric));
        want[2].is_configured = true;
        check_scan("direct-fabric", patterns, want, ARRAY_SIZE(want));
}

/* Each class/net entry of the malformed tree is wrong in one way; none may stop the scan.
 * badifindex (garbage ifindex) is skipped with a warning, so nomtu, at the same bus:dev.fn in another
 * domain, has no twin; emptyib has no RDMA device; bonding_masters is a file, not a netdev. */
static const struct expect malformed[] = {
        { "nomtu", 3, "mlx5_0", "0000:03:00.0", "", 0, true, true, "up", 100000, false },
        { "nooperstate", 4, "mlx5_1", "0000:04:00.0", "", 9000, true, true, "unknown", 100000, false },
        { "notpci", 5, "hns_0", "", "", 9000, true, true, "up", 100000, false },
};

/* Soft-RoCE (rdma_rxe) over veths: no PCI device under either netdev, so only the RDMA devices'
 * own attributes say which netdev each runs over: a0's device through its GID table, a1's (down,
 * its GIDs gone) through the device's parent. Both are fabric netdevs without being named. */
static const struct expect soft_roce[] = {
        { "a0", 3, "rxe_a0", "", "", 9000, true, true, "up", 10000, false },
        { "a1", 5, "rxe_a1", "", "", 9000, false, false, "down", -1, false },
};

static void test_soft_roce(void)
{
        check_scan("soft-roce", NULL, soft_roce, ARRAY_SIZE(soft_roce));
}

/* A host with no RDMA driver loaded (no class/infiniband at all): a named netdev is still found. */
static void test_no_rdma(void)
{
        static const struct expect no_rdma[] = {
                { "eth0", 2, "", "", "", 1500, true, true, "up", -1, true },
        };
        char *eth0[] = { "eth0", NULL };

        check_scan("no-rdma", eth0, no_rdma, ARRAY_SIZE(no_rdma));
}

static void test_malformed(void)
{
        struct netif_list list;

        check_scan("malformed", NULL, malformed, ARRAY_SIZE(malformed));
        CHECK(netif_scan(tree("malformed"), NULL, &list) == 0);
        CHECK(strv_length(list.warnings) == 1);
        CHECK(list.warnings &&
              strcmp(list.warnings[0], "class/net/badifindex: ifindex is not a number, left out") == 0);
        netif_list_free(&list);
        CHECK(list.warnings == NULL);
}

static void test_malformed_named_by_patterns(void)
{
        char *patterns[] = { "emptyib", "badifindex", "bonding_masters", NULL };
        struct expect want[ARRAY_SIZE(malformed) + 1];

        want[0] = (struct expect){
                "emptyib", 6, "", "0000:05:00.0", "", 9000, true, true, "up", 100000, true
        };
        memcpy(want + 1, malformed, sizeof(malformed));
        check_scan("malformed", patterns, want, ARRAY_SIZE(want));
}

static void test_missing_root(void)
{
        struct netif_list list = { .n = 42 };

        CHECK(netif_scan(tree("no-such-tree"), NULL, &list) < 0);
        CHECK(list.v == NULL && list.n == 0);
}

static void test_list_find_and_free(void)
{
        struct netif_list list;
        const struct netif *n;

        CHECK(netif_scan(tree("spark-twins"), NULL, &list) == 0);
        CHECK(list.warnings == NULL);
        n = netif_list_find(&list, "enp1s0f1np1");
        CHECK(n && strcmp(n->twin, "enP2p1s0f1np1") == 0);
        n = n ? netif_list_find(&list, n->twin) : NULL;
        CHECK(n && strcmp(n->twin, "enp1s0f1np1") == 0);
        CHECK(netif_list_find(&list, "lo") == NULL);
        CHECK(netif_list_find(&list, "enp1s0f1") == NULL);
        netif_list_free(&list);
        CHECK(list.v == NULL && list.n == 0);
        netif_list_free(&list); /* a freed list can be freed again */
}

static void test_pci_are_twins(void)
{
        CHECK(netif_pci_are_twins("0000:01:00.1", "0002:01:00.1"));
        CHECK(netif_pci_are_twins("0002:01:00.1", "0000:01:00.1"));
        CHECK(netif_pci_are_twins("0000:01:00.0", "0002:01:00.0"));
        CHECK(!netif_pci_are_twins("0000:01:00.1", "0000:01:00.1")); /* same domain */
        CHECK(!netif_pci_are_twins("0000:41:00.0", "0000:41:00.1")); /* two ports of one NIC */
        CHECK(!netif_pci_are_twins("0000:01:00.0", "0002:01:00.1")); /* other function */
        CHECK(!netif_pci_are_twins("0000:01:00.1", "0002:02:00.1")); /* other bus */
        CHECK(!netif_pci_are_twins("0000:01:00.1", "0002:01:01.1")); /* other device */
        CHECK(!netif_pci_are_twins("0000:01:00.1", ""));
        CHECK(!netif_pci_are_twins("", ""));
        CHECK(!netif_pci_are_twins("garbage", "0002:01:00.1"));
        CHECK(!netif_pci_are_twins("0000:01:00.1", "c4000000.ethernet"));
        CHECK(!netif_pci_are_twins("0000:01:00", "0002:01:00"));
        CHECK(!netif_pci_are_twins("0000:01:00.1x", "0002:01:00.1x"));
        CHECK(!netif_pci_are_twins("0000:01:00.1", "0002:01:00.1 "));
}

static void test_name_matches(void)
{
        char *globs[] = { "enp1s0f*", "enP7s?", "mesh[01]", NULL };
        char *none[] = { NULL };

        CHECK(netif_name_matches(globs, "enp1s0f1np1"));
        CHECK(netif_name_matches(globs, "enp1s0f0np0"));
        CHECK(!netif_name_matches(globs, "enP2p1s0f1np1")); /* globs are case-sensitive */
        CHECK(netif_name_matches(globs, "enP7s7"));
        CHECK(!netif_name_matches(globs, "enP7s77"));
        CHECK(netif_name_matches(globs, "mesh1"));
        CHECK(!netif_name_matches(globs, "mesh2"));
        CHECK(!netif_name_matches(globs, "lo"));
        CHECK(!netif_name_matches(globs, ""));
        CHECK(!netif_name_matches(none, "enp1s0f1np1"));
        CHECK(!netif_name_matches(NULL, "enp1s0f1np1"));
}

int main(void)
{
        RUN(test_spark_twins);
        RUN(test_spark_twins_lo_only_when_named);
        RUN(test_single_port);
        RUN(test_spark_one_port);
        RUN(test_mesh_two_nics);
        RUN(test_direct_fabric);
        RUN(test_direct_fabric_management_by_glob);
        RUN(test_direct_fabric_pattern_marks_fabric_netdev);
        RUN(test_soft_roce);
        RUN(test_no_rdma);
        RUN(test_malformed);
        RUN(test_malformed_named_by_patterns);
        RUN(test_missing_root);
        RUN(test_list_find_and_free);
        RUN(test_pci_are_twins);
        RUN(test_name_matches);
        return test_result();
}
