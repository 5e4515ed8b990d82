/* The RDMA inventory (what ibdev2netdev and show_gids print) over the sysfs fixture trees in
 * tests/fixtures/hosts (see its README.md for which field notes each tree models), and its parsers. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "inventory/rdma.h"
#include "test.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must name tests/fixtures/hosts (meson passes it)"
#endif
#ifndef HAVE_IBVERBS
#error "HAVE_IBVERBS must say whether the inventory was built with libibverbs (meson passes it)"
#endif

#define ZERO_GID "0000:0000:0000:0000:0000:0000:0000:0000"

static const char *tree(const char *name)
{
        static char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s/sys", FIXTURES_DIR, name);
        return path;
}

/* One expected device, in scan order (sorted by name, as class/infiniband lists them). */
struct expect_device {
        const char *name;
        const char *pci;
        const char *twin;
        size_t n_ports;
};

/* One expected port; roce_gid is roce_v2_ipv4_gid. */
struct expect_port {
        const char *device;
        unsigned num;
        unsigned state;
        const char *state_name;
        unsigned phys_state;
        const char *phys_state_name;
        const char *link_layer;
        const char *rate;
        unsigned rate_gbps;
        const char *netdev;
        int roce_gid;
        size_t n_gids;
};

struct expect_gid {
        unsigned index;
        enum rdma_gid_type type;
        const char *ipv4;
        const char *netdev;
};

static void dump(const struct rdma_inventory *inv)
{
        for (size_t i = 0; i < inv->n; i++)
                fprintf(stderr, "  device %s pci=%s twin=%s ports=%zu\n", inv->v[i].name, inv->v[i].pci,
                        inv->v[i].twin, inv->v[i].n_ports);
        for (char **w = inv->warnings; w && *w; w++)
                fprintf(stderr, "  warning: %s\n", *w);
}

static void check_devices(const struct rdma_inventory *inv, const struct expect_device *want, size_t n)
{
        int before = test_failures;

        CHECK(inv->n == n);
        for (size_t i = 0; i < inv->n && i < n; i++) {
                CHECK_STREQ(inv->v[i].name, want[i].name);
                CHECK_STREQ(inv->v[i].pci, want[i].pci);
                CHECK_STREQ(inv->v[i].twin, want[i].twin);
                CHECK(inv->v[i].n_ports == want[i].n_ports);
        }
        if (test_failures != before)
                dump(inv);
}

static const struct rdma_port *find_port(const struct rdma_inventory *inv, const char *device, unsigned num)
{
        const struct rdma_device *d = rdma_find_device(inv, device);

        for (size_t i = 0; d && i < d->n_ports; i++)
                if (d->ports[i].num == num)
                        return &d->ports[i];
        return NULL;
}

static void check_port(const struct rdma_inventory *inv, const struct expect_port *want)
{
        const struct rdma_port *p = find_port(inv, want->device, want->num);
        int before = test_failures;

        CHECK(p != NULL);
        if (!p)
                return;
        CHECK(p->state == want->state);
        CHECK_STREQ(p->state_name, want->state_name);
        CHECK(p->phys_state == want->phys_state);
        CHECK_STREQ(p->phys_state_name, want->phys_state_name);
        CHECK_STREQ(p->link_layer, want->link_layer);
        CHECK_STREQ(p->rate, want->rate);
        CHECK(p->rate_gbps == want->rate_gbps);
        CHECK(p->active_mtu == 0); /* fixture trees: no verbs */
        CHECK_STREQ(p->netdev, want->netdev);
        CHECK(p->roce_v2_ipv4_gid == want->roce_gid);
        CHECK(p->n_gids == want->n_gids);
        if (test_failures != before)
                fprintf(stderr, "  (port %s %u)\n", want->device, want->num);
}

static void check_ports(const struct rdma_inventory *inv, const struct expect_port *want, size_t n)
{
        for (size_t i = 0; i < n; i++)
                check_port(inv, &want[i]);
}

static void check_gids(const struct rdma_inventory *inv, const char *device, unsigned num,
                       const struct expect_gid *want, size_t n)
{
        const struct rdma_port *p = find_port(inv, device, num);
        int before = test_failures;

        CHECK(p && p->n_gids == n);
        for (size_t i = 0; p && i < p->n_gids && i < n; i++) {
                const struct rdma_gid *g = &p->gids[i];

                CHECK(g->index == want[i].index);
                CHECK(g->type == want[i].type);
                CHECK_STREQ(g->ipv4, want[i].ipv4);
                CHECK_STREQ(g->netdev, want[i].netdev);
                CHECK(strlen(g->gid) == 39 && strcmp(g->gid, ZERO_GID) != 0);
        }
        if (test_failures != before)
                fprintf(stderr, "  (gids of %s port %u)\n", device, num);
}

static void check_no_warnings(const struct rdma_inventory *inv)
{
        CHECK(inv->warnings != NULL);
        CHECK(inv->warnings && inv->warnings[0] == NULL);
        if (inv->warnings && inv->warnings[0])
                dump(inv);
        CHECK(!inv->verbs_used);
        CHECK_STREQ(inv->verbs_error, "");
}

#define UP     4, "ACTIVE", 5, "LinkUp", "Ethernet"
#define NOLINK 1, "DOWN", 2, "Polling", "Ethernet", "40 Gb/sec (4X QDR)", 40
#define ADMDN  1, "DOWN", 3, "Disabled", "Ethernet", "40 Gb/sec (4X QDR)", 40
#define G200   "200 Gb/sec (4X HDR)", 200
#define G100   "100 Gb/sec (4X EDR)", 100

/* Seed 001: the cable is in the right-hand port, whose twins rocep1s0f1/roceP2p1s0f1 are ACTIVE
 * and only rocep1s0f1's netdev has an address (RoCE v2 IPv4 GID 3). roceP2p1s0f0's netdev is
 * administratively down: the kernel left no GID, so its netdev comes from the PCI function. */
static void test_spark_twins(void)
{
        static const struct expect_device devices[] = {
                { "roceP2p1s0f0", "0002:01:00.0", "rocep1s0f0", 1 },
                { "roceP2p1s0f1", "0002:01:00.1", "rocep1s0f1", 1 },
                { "rocep1s0f0", "0000:01:00.0", "roceP2p1s0f0", 1 },
                { "rocep1s0f1", "0000:01:00.1", "roceP2p1s0f1", 1 },
        };
        static const struct expect_port ports[] = {
                { "roceP2p1s0f0", 1, ADMDN, "enP2p1s0f0np0", -1, 0 },
                { "roceP2p1s0f1", 1, UP, G200, "enP2p1s0f1np1", -1, 2 },
                { "rocep1s0f0", 1, NOLINK, "enp1s0f0np0", -1, 2 },
                { "rocep1s0f1", 1, UP, G200, "enp1s0f1np1", 3, 4 },
        };
        static const struct expect_gid gids[] = {
                { 0, RDMA_GID_ROCE_V1, "", "enp1s0f1np1" },
                { 1, RDMA_GID_ROCE_V2, "", "enp1s0f1np1" },
                { 2, RDMA_GID_ROCE_V1, "192.168.177.11", "enp1s0f1np1" },
                { 3, RDMA_GID_ROCE_V2, "192.168.177.11", "enp1s0f1np1" },
        };
        struct rdma_inventory inv;

        CHECK(rdma_scan(tree("spark-twins"), false, &inv) == 0);
        check_devices(&inv, devices, ARRAY_SIZE(devices));
        check_ports(&inv, ports, ARRAY_SIZE(ports));
        check_gids(&inv, "rocep1s0f1", 1, gids, ARRAY_SIZE(gids));
        check_no_warnings(&inv);
        /* Every function a healthy Spark rail: 32 GT/s x4 of 32 GT/s x4, AER counters at 0. */
        for (size_t i = 0; i < inv.n; i++) {
                const struct pcie_link *l = &inv.v[i].pcie;

                CHECK(l->is_known && l->speed_gts == 32 && l->width == 4 && pcie_link_is_spark_trained(l));
                CHECK(pcie_link_is_spark_capable(l) && !pcie_link_is_degraded(l));
                CHECK(l->has_aer && l->aer_fatal == 0 && l->aer_fatal_since_start == -1);
        }
        CHECK(rdma_find_port_by_netdev(&inv, "enp1s0f1np1", NULL)->netdev_speed_mbps == 200000);
        CHECK(rdma_find_port_by_netdev(&inv, "enp1s0f0np0", NULL)->netdev_speed_mbps == -1); /* no cable */
        rdma_inventory_free(&inv);
}

static void test_rail_faults(void)
{
        struct rdma_inventory inv;
        const struct rdma_device *d;

        CHECK(rdma_scan(tree("spark-rail-faults"), false, &inv) == 0);
        CHECK((d = rdma_find_device(&inv, "mlx5_1")) && d->pcie.width == 2 && d->pcie.max_width == 4 &&
              pcie_link_is_degraded(&d->pcie) && !pcie_link_is_spark_trained(&d->pcie));
        CHECK((d = rdma_find_device(&inv, "mlx5_2")) && d->pcie.speed_gts == 16 &&
              pcie_link_is_degraded(&d->pcie) && d->pcie.aer_nonfatal == 1);
        CHECK((d = rdma_find_device(&inv, "mlx5_3")) && d->pcie.aer_fatal == 3 &&
              d->ports[0].netdev_speed_mbps == 100000);
        rdma_inventory_free(&inv);
        /* No PCIe files (an older tree, a soft device): unknown, never degraded. */
        CHECK(rdma_scan(tree("single-port"), false, &inv) == 0);
        CHECK(!inv.v[0].pcie.is_known && !inv.v[0].pcie.has_aer && !pcie_link_is_degraded(&inv.v[0].pcie));
        rdma_inventory_free(&inv);
}

static void test_parse_pcie(void)
{
        double gts = 0;
        uint64_t n = 0;

        CHECK(pcie_parse_speed("32.0 GT/s PCIe", &gts) == 0 && gts == 32);
        CHECK(pcie_parse_speed("2.5 GT/s", &gts) == 0 && gts == 2.5);
        CHECK(pcie_parse_speed("Unknown", &gts) == -EBADMSG);
        CHECK(pcie_parse_speed("32.0 GB/s", &gts) == -EBADMSG);
        CHECK(pcie_parse_speed("32.0 GT/sPCIe", &gts) == -EBADMSG);
        CHECK(pcie_parse_speed("-8 GT/s", &gts) == -EBADMSG);
        CHECK(pcie_parse_aer_total("Undefined 0\nDLP 2\nTOTAL_ERR_FATAL 2\n", "TOTAL_ERR_FATAL", &n) == 0 &&
              n == 2);
        CHECK(pcie_parse_aer_total("TOTAL_ERR_FATAL 7", "TOTAL_ERR_FATAL", &n) == 0 && n == 7);
        CHECK(pcie_parse_aer_total("DLP 2\n", "TOTAL_ERR_FATAL", &n) == -ENOENT);
        CHECK(pcie_parse_aer_total("TOTAL_ERR_FATAL x\n", "TOTAL_ERR_FATAL", &n) == -EBADMSG);
        CHECK(pcie_parse_aer_total("TOTAL_ERR_FATAL 3 4\n", "TOTAL_ERR_FATAL", &n) == -EBADMSG);
        CHECK(pcie_parse_aer_total("TOTAL_ERR_FATALITY 3\nTOTAL_ERR_FATAL 4", "TOTAL_ERR_FATAL", &n) == 0 &&
              n == 4);
}

/* Seed 002: two ports of one ConnectX in one PCI domain are not twins; mlx5_1 is forced down. */
static void test_single_port(void)
{
        static const struct expect_device devices[] = {
                { "mlx5_0", "0000:41:00.0", "", 1 },
                { "mlx5_1", "0000:41:00.1", "", 1 },
        };
        static const struct expect_port ports[] = {
                { "mlx5_0", 1, UP, G100, "enp65s0f0np0", 3, 4 },
                { "mlx5_1", 1, ADMDN, "enp65s0f1np1", -1, 0 },
        };
        struct rdma_inventory inv;
        const struct rdma_port *p;

        CHECK(rdma_scan(tree("single-port"), false, &inv) == 0);
        check_devices(&inv, devices, ARRAY_SIZE(devices));
        check_ports(&inv, ports, ARRAY_SIZE(ports));
        p = find_port(&inv, "mlx5_0", 1);
        CHECK(p && p->n_gids == 4 && strcmp(p->gids[3].ipv4, "192.168.100.1") == 0);
        check_no_warnings(&inv);
        rdma_inventory_free(&inv);
}

/* Seed 003: one subnet per mesh link, each on its own device; the twins are up without addresses. */
static void test_mesh_two_nics(void)
{
        static const struct expect_device devices[] = {
                { "roceP2p1s0f0", "0002:01:00.0", "rocep1s0f0", 1 },
                { "roceP2p1s0f1", "0002:01:00.1", "rocep1s0f1", 1 },
                { "rocep1s0f0", "0000:01:00.0", "roceP2p1s0f0", 1 },
                { "rocep1s0f1", "0000:01:00.1", "roceP2p1s0f1", 1 },
        };
        static const struct expect_port ports[] = {
                { "roceP2p1s0f0", 1, UP, G100, "enP2p1s0f0np0", -1, 2 },
                { "roceP2p1s0f1", 1, UP, G100, "enP2p1s0f1np1", -1, 2 },
                { "rocep1s0f0", 1, UP, G100, "enp1s0f0np0", 3, 4 },
                { "rocep1s0f1", 1, UP, G100, "enp1s0f1np1", 3, 4 },
        };
        struct rdma_inventory inv;

        CHECK(rdma_scan(tree("mesh-two-nics"), false, &inv) == 0);
        check_devices(&inv, devices, ARRAY_SIZE(devices));
        check_ports(&inv, ports, ARRAY_SIZE(ports));
        CHECK(rdma_port_gid_for_ipv4(find_port(&inv, "rocep1s0f0", 1), "192.168.101.2") == 3);
        CHECK(rdma_port_gid_for_ipv4(find_port(&inv, "rocep1s0f1", 1), "192.168.100.2") == 3);
        CHECK(rdma_port_gid_for_ipv4(find_port(&inv, "rocep1s0f0", 1), "192.168.100.2") == -1);
        check_no_warnings(&inv);
        rdma_inventory_free(&inv);
}

/* Seed 004: mlx5_N names; twins found by PCI address, not by name. */
static void test_direct_fabric(void)
{
        static const struct expect_device devices[] = {
                { "mlx5_0", "0000:01:00.0", "mlx5_2", 1 },
                { "mlx5_1", "0000:01:00.1", "mlx5_3", 1 },
                { "mlx5_2", "0002:01:00.0", "mlx5_0", 1 },
                { "mlx5_3", "0002:01:00.1", "mlx5_1", 1 },
        };
        static const struct expect_port ports[] = {
                { "mlx5_0", 1, UP, G200, "enp1s0f0np0", 3, 4 },
                { "mlx5_1", 1, UP, G200, "enp1s0f1np1", 3, 4 },
                { "mlx5_2", 1, UP, G200, "enP2p1s0f0np0", -1, 2 },
                { "mlx5_3", 1, UP, G200, "enP2p1s0f1np1", 3, 4 },
        };
        struct rdma_inventory inv;

        CHECK(rdma_scan(tree("direct-fabric"), false, &inv) == 0);
        check_devices(&inv, devices, ARRAY_SIZE(devices));
        check_ports(&inv, ports, ARRAY_SIZE(ports));
        CHECK(rdma_port_gid_for_ipv4(find_port(&inv, "mlx5_0", 1), "10.0.0.1") == 3);
        CHECK(rdma_port_gid_for_ipv4(find_port(&inv, "mlx5_1", 1), "192.168.0.188") == 3);
        CHECK(rdma_port_gid_for_ipv4(find_port(&inv, "mlx5_3", 1), "192.168.0.189") == 3);
        check_no_warnings(&inv);
        rdma_inventory_free(&inv);
}

/* A global IPv6 address takes GIDs 2/3, so the RoCE v2 IPv4 GID is 5, not the 3 guides assume. */
static void test_gid_index_5(void)
{
        static const struct expect_device devices[] = {
                { "roceP2p1s0f1", "0002:01:00.1", "rocep1s0f1", 1 },
                { "rocep1s0f1", "0000:01:00.1", "roceP2p1s0f1", 1 },
        };
        static const struct expect_port ports[] = {
                { "roceP2p1s0f1", 1, UP, G200, "enP2p1s0f1np1", -1, 2 },
                { "rocep1s0f1", 1, UP, G200, "enp1s0f1np1", 5, 6 },
        };
        static const struct expect_gid gids[] = {
                { 0, RDMA_GID_ROCE_V1, "", "enp1s0f1np1" },
                { 1, RDMA_GID_ROCE_V2, "", "enp1s0f1np1" },
                { 2, RDMA_GID_ROCE_V1, "", "enp1s0f1np1" },
                { 3, RDMA_GID_ROCE_V2, "", "enp1s0f1np1" },
                { 4, RDMA_GID_ROCE_V1, "192.168.177.11", "enp1s0f1np1" },
                { 5, RDMA_GID_ROCE_V2, "192.168.177.11", "enp1s0f1np1" },
        };
        struct rdma_inventory inv;
        const struct rdma_port *p;

        CHECK(rdma_scan(tree("gid-index-5"), false, &inv) == 0);
        check_devices(&inv, devices, ARRAY_SIZE(devices));
        check_ports(&inv, ports, ARRAY_SIZE(ports));
        check_gids(&inv, "rocep1s0f1", 1, gids, ARRAY_SIZE(gids));
        p = find_port(&inv, "rocep1s0f1", 1);
        CHECK(p && strcmp(p->gids[3].gid, "2001:0db8:0177:0000:0e42:a1ff:fe5b:0011") == 0);
        CHECK(rdma_port_gid_for_ipv4(p, "192.168.177.11") == 5);
        check_no_warnings(&inv);
        rdma_inventory_free(&inv);
}

/* Soft-RoCE as Debian 12's kernel shows it (rdma_rxe over veths): no parent device, each GID
 * once as RoCE v2 (fe80 at 0, the IPv4-mapped address at 1), the netdev in gid_attrs/ndevs and in
 * the device's parent attribute; rxe_a1's netdev is down, its GIDs gone but its parent kept. */
static void test_soft_roce(void)
{
        static const struct expect_device devices[] = {
                { "rxe_a0", "", "", 1 },
                { "rxe_a1", "", "", 1 },
        };
        static const struct expect_port ports[] = {
                { "rxe_a0", 1, UP, "10 Gb/sec (1X FDR10)", 10, "a0", 1, 2 },
                { "rxe_a1", 1, 1, "DOWN", 3, "Disabled", "Ethernet", "10 Gb/sec (1X FDR10)", 10, "a1", -1,
                  0 },
        };
        static const struct expect_gid gids[] = {
                { 0, RDMA_GID_ROCE_V2, "", "a0" },
                { 1, RDMA_GID_ROCE_V2, "10.0.0.1", "a0" },
        };
        struct rdma_inventory inv;

        CHECK(rdma_scan(tree("soft-roce"), false, &inv) == 0);
        check_devices(&inv, devices, ARRAY_SIZE(devices));
        check_ports(&inv, ports, ARRAY_SIZE(ports));
        check_gids(&inv, "rxe_a0", 1, gids, ARRAY_SIZE(gids));
        CHECK(rdma_port_gid_for_ipv4(find_port(&inv, "rxe_a0", 1), "10.0.0.1") == 1);
        check_no_warnings(&inv);
        rdma_inventory_free(&inv);
}

/* The netdev has an address (see the tree's addresses file) that the GID table does not show. */
static void test_gid_missing(void)
{
        static const struct expect_device devices[] = {
                { "rocep1s0f1", "0000:01:00.1", "", 1 },
        };
        static const struct expect_port ports[] = {
                { "rocep1s0f1", 1, UP, G200, "enp1s0f1np1", -1, 2 },
        };
        struct rdma_inventory inv;

        CHECK(rdma_scan(tree("gid-missing"), false, &inv) == 0);
        check_devices(&inv, devices, ARRAY_SIZE(devices));
        check_ports(&inv, ports, ARRAY_SIZE(ports));
        CHECK(rdma_port_gid_for_ipv4(find_port(&inv, "rocep1s0f1", 1), "192.168.177.11") == -1);
        check_no_warnings(&inv);
        rdma_inventory_free(&inv);
}

/* Every defect of badrdma is one warning that says where it is, what was wrong and what was
 * expected; the rest of the device is still read. Its two ports share one PCI function whose
 * netdevs tell them apart by dev_port. rxe0 has no PCI parent and no netdev. */
static void test_malformed(void)
{
        static const struct expect_device devices[] = {
                { "badrdma", "0000:06:00.0", "", 2 },
                { "rxe0", "", "", 1 },
        };
        static const struct expect_gid gids1[] = {
                { 0, RDMA_GID_ROCE_V1, "", "" },
                { 2, RDMA_GID_UNKNOWN, "10.9.8.7", "" },
                { 3, RDMA_GID_ROCE_V2, "10.9.8.7", "" },
        };
        static const struct expect_gid gids2[] = {
                { 0, RDMA_GID_UNKNOWN, "", "" }, /* "IB/RoCE v1" on an unknown link layer */
        };
        static const char *const warnings[] = {
                "badrdma: ports/bogus is not a port number (expected a number)",
                "badrdma port 1: cannot read rate: No such file or directory (expected \"N Gb/sec (...)\" "
                "such "
                "as \"200 Gb/sec (4X HDR)\")",
                "badrdma port 1: gid 1: malformed GID \"fe80:0000:0000:0000:0e42:a1ff\" (expected 8 groups "
                "of "
                "4 hex digits)",
                "badrdma port 1: gid 2: unknown type \"RoCE v3\" (expected \"IB/RoCE v1\" or \"RoCE v2\")",
                "badrdma port 2: state \"ACTIVE\" is malformed (expected \"N: NAME\" such as \"4: ACTIVE\")",
                "badrdma port 2: unknown link layer \"Unknown\" (expected Ethernet or InfiniBand)",
        };
        struct rdma_inventory inv;
        const struct rdma_port *p;
        int before = test_failures;

        CHECK(rdma_scan(tree("malformed"), false, &inv) == 0);
        check_devices(&inv, devices, ARRAY_SIZE(devices));

        /* Port 1 is down and has no rate; its GID table has one truncated entry, one of an unknown
         * type, an all-zero one (with a type, as older kernels show) and one without a type: the
         * good entries and the one of unknown type stay, and the RoCE v2 IPv4 GID is still found. */
        p = find_port(&inv, "badrdma", 1);
        CHECK(p && p->state == RDMA_PORT_DOWN && strcmp(p->state_name, "DOWN") == 0);
        CHECK(p && p->phys_state == RDMA_PHYS_POLLING && strcmp(p->phys_state_name, "Polling") == 0);
        CHECK(p && strcmp(p->link_layer, "Ethernet") == 0);
        CHECK(p && p->rate[0] == '\0' && p->rate_gbps == 0);
        CHECK(p && strcmp(p->netdev, "badrdma0") == 0); /* dev_port 0 */
        CHECK(p && p->roce_v2_ipv4_gid == 3);
        check_gids(&inv, "badrdma", 1, gids1, ARRAY_SIZE(gids1));

        /* Port 2: state without a number, link layer the kernel calls "Unknown". */
        p = find_port(&inv, "badrdma", 2);
        CHECK(p && p->state == 0 && p->state_name[0] == '\0');
        CHECK(p && p->phys_state == RDMA_PHYS_LINK_UP);
        CHECK(p && p->link_layer[0] == '\0');
        CHECK(p && p->rate_gbps == 200);
        CHECK(p && strcmp(p->netdev, "badrdma1") == 0); /* dev_port 1 */
        CHECK(p && p->roce_v2_ipv4_gid == -1);
        check_gids(&inv, "badrdma", 2, gids2, ARRAY_SIZE(gids2));

        /* rxe0: the 1X SDR rate is 2.5 Gb/s, counted as 2. */
        p = find_port(&inv, "rxe0", 1);
        CHECK(p && p->state == RDMA_PORT_DOWN && p->phys_state == RDMA_PHYS_DISABLED);
        CHECK(p && strcmp(p->rate, "2.5 Gb/sec (1X SDR)") == 0 && p->rate_gbps == 2);
        CHECK(p && p->n_gids == 0 && p->netdev[0] == '\0' && p->roce_v2_ipv4_gid == -1);

        CHECK(inv.warnings && strv_length(inv.warnings) == ARRAY_SIZE(warnings));
        for (size_t i = 0; inv.warnings && inv.warnings[i] && i < ARRAY_SIZE(warnings); i++)
                CHECK_STREQ(inv.warnings[i], warnings[i]);
        if (test_failures != before)
                dump(&inv);
        rdma_inventory_free(&inv);
}

static void test_missing_class(void)
{
        struct rdma_inventory inv = { .n = 42 };

        /* No class/infiniband (no RDMA driver) is an empty inventory, not an error. */
        CHECK(rdma_scan(tree("no-such-tree"), false, &inv) == 0);
        CHECK(inv.n == 0 && inv.v == NULL);
        check_no_warnings(&inv);
        rdma_inventory_free(&inv);
        CHECK(inv.warnings == NULL && inv.n == 0);
        rdma_inventory_free(&inv); /* a freed inventory can be freed again */
}

/* What sysfs gave, as JSON: the inventory less what libibverbs adds (verbs_used, verbs_error and
 * each port's active_mtu). */
static json_object *sysfs_part(const struct rdma_inventory *inv)
{
        json_object *o = rdma_inventory_to_json(inv), *devices = NULL, *ports = NULL;

        json_object_object_del(o, "verbs_used");
        json_object_object_del(o, "verbs_error");
        json_object_object_get_ex(o, "devices", &devices);
        for (size_t i = 0; devices && i < json_object_array_length(devices); i++) {
                if (!json_object_object_get_ex(json_object_array_get_idx(devices, i), "ports", &ports))
                        continue;
                for (size_t k = 0; k < json_object_array_length(ports); k++)
                        json_object_object_del(json_object_array_get_idx(ports, k), "active_mtu");
        }
        return o;
}

/* libibverbs never fails a scan nor changes what sysfs gave. Over fixture trees, whose devices
 * verbs here does not know (or knows by the same names, on a Spark), the inventory with verbs is
 * the one without but for the active MTU; verbs_used says whether verbs were asked. */
static void test_verbs_never_fatal(void)
{
        static const char *const names[] = { "spark-twins", "gid-index-5", "malformed" };

        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                struct rdma_inventory plain, verbs;
                json_object *a, *b;

                CHECK(rdma_scan(tree(names[i]), false, &plain) == 0);
                CHECK(rdma_scan(tree(names[i]), true, &verbs) == 0);
                a = sysfs_part(&plain);
                b = sysfs_part(&verbs);
                CHECK(plain.n > 0 && verbs.n == plain.n);
                CHECK(json_object_equal(a, b));
                if (!json_object_equal(a, b))
                        printf("     %s without verbs:\n%s\n     with verbs:\n%s\n", names[i],
                               json_object_to_json_string(a), json_object_to_json_string(b));
                CHECK(!plain.verbs_used);
                CHECK_STREQ(plain.verbs_error, "");
#if HAVE_IBVERBS
                CHECK(verbs.verbs_used);
#else
                CHECK(!verbs.verbs_used);
                CHECK_STREQ(verbs.verbs_error, "sparkd was built without rdma-core");
#endif
                json_object_put(a);
                json_object_put(b);
                rdma_inventory_free(&plain);
                rdma_inventory_free(&verbs);
        }
}

static void test_find(void)
{
        struct rdma_inventory inv;
        const struct rdma_device *d = (const void *)&inv;
        const struct rdma_port *p;

        CHECK(rdma_scan(tree("spark-twins"), false, &inv) == 0);
        CHECK(rdma_find_device(&inv, "rocep1s0f1") == &inv.v[3]);
        CHECK(rdma_find_device(&inv, "rocep1s0f") == NULL);
        CHECK(rdma_find_device(&inv, "mlx5_0") == NULL);

        p = rdma_find_port_by_netdev(&inv, "enp1s0f1np1", &d);
        CHECK(p && p->num == 1 && d == &inv.v[3]);
        CHECK(rdma_port_gid_for_ipv4(p, "192.168.177.11") == 3); /* v2, not the v1 entry at 2 */
        CHECK(rdma_port_gid_for_ipv4(p, "192.168.177.12") == -1);
        CHECK(rdma_port_gid_for_ipv4(p, "") == -1);
        CHECK(rdma_port_gid_for_ipv4(NULL, "192.168.177.11") == -1);

        /* Found through the PCI function's netdev: its GIDs are gone while it is down. */
        p = rdma_find_port_by_netdev(&inv, "enP2p1s0f0np0", &d);
        CHECK(p && d && strcmp(d->name, "roceP2p1s0f0") == 0);
        CHECK(rdma_port_gid_for_ipv4(p, "192.168.177.11") == -1);

        CHECK(rdma_find_port_by_netdev(&inv, "enP2p1s0f1np1", NULL) == &inv.v[1].ports[0]);
        CHECK(rdma_find_port_by_netdev(&inv, "lo", &d) == NULL && d == NULL);
        d = &inv.v[0];
        CHECK(rdma_find_port_by_netdev(&inv, "", &d) == NULL && d == NULL);
        rdma_inventory_free(&inv);

        /* rxe0's netdev-less port is not found by "". */
        CHECK(rdma_scan(tree("malformed"), false, &inv) == 0);
        CHECK(rdma_find_port_by_netdev(&inv, "", NULL) == NULL);
        CHECK(rdma_find_port_by_netdev(&inv, "badrdma1", NULL) == &inv.v[0].ports[1]);
        CHECK(rdma_find_port_by_netdev(&inv, "notpci", NULL) == NULL);
        rdma_inventory_free(&inv);
}

static void test_parse_state(void)
{
        static const char *const bad[] = {
                "",
                "ACTIVE",
                "4 ACTIVE",
                "4:ACTIVE",
                "4:",
                "4: ",
                ": ACTIVE",
                "-1: X",
                "+4: X",
                "0x4: X",
                "4a: X",
                "4: \x01",
                "99999999999: ACTIVE",
        };
        char name[32];
        unsigned num;

        CHECK(rdma_parse_state("4: ACTIVE", &num, name, sizeof(name)) == 0);
        CHECK(num == 4);
        CHECK_STREQ(name, "ACTIVE");
        CHECK(rdma_parse_state("5: LinkUp", &num, name, sizeof(name)) == 0);
        CHECK(num == 5);
        CHECK_STREQ(name, "LinkUp");
        CHECK(rdma_parse_state("4: PortConfigurationTraining", &num, name, sizeof(name)) == 0);
        CHECK_STREQ(name, "PortConfigurationTraining");
        CHECK(rdma_parse_state("7: Phy Test", &num, name, sizeof(name)) == 0);
        CHECK(num == 7);
        CHECK_STREQ(name, "Phy Test");
        CHECK(rdma_parse_state("0: <unknown>", &num, name, sizeof(name)) == 0);
        CHECK(num == 0);
        CHECK(rdma_parse_state("4: ACTIVE", &num, name, 6) == -ENOBUFS);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                num = 42;
                CHECK(rdma_parse_state(bad[i], &num, name, sizeof(name)) == -EBADMSG);
                CHECK(num == 42);
        }
}

static void test_parse_rate(void)
{
        static const char *const bad[] = {
                "",          "fast",      "200",         "200 Gb/s",  "200 Mb/sec", " 200 Gb/sec",
                "2. Gb/sec", ".5 Gb/sec", "200 Gb/secs", "-1 Gb/sec", "200Gb/sec",  "99999999999 Gb/sec",
        };
        unsigned gbps;

        CHECK(rdma_parse_rate_gbps("200 Gb/sec (4X HDR)", &gbps) == 0 && gbps == 200);
        CHECK(rdma_parse_rate_gbps("40 Gb/sec (4X QDR)", &gbps) == 0 && gbps == 40);
        CHECK(rdma_parse_rate_gbps("400 Gb/sec (4X NDR)", &gbps) == 0 && gbps == 400);
        CHECK(rdma_parse_rate_gbps("2.5 Gb/sec (1X SDR)", &gbps) == 0 && gbps == 2);
        CHECK(rdma_parse_rate_gbps("100 Gb/sec", &gbps) == 0 && gbps == 100);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                gbps = 42;
                CHECK(rdma_parse_rate_gbps(bad[i], &gbps) == -EBADMSG);
                CHECK(gbps == 42);
        }
}

static void test_parse_gid(void)
{
        static const char *const bad[] = {
                "",
                "fe80:0000:0000:0000:0e42:a1ff",            /* truncated */
                "fe80:0000:0000:0000:0e42:a1ff:feb1:771",   /* last group short */
                "fe80:0000:0000:0000:0e42:a1ff:feb1:77110", /* one digit too many */
                "fe80:0000:0000:0000:0e42:a1ff:feb1:7711 ",
                "fe80-0000:0000:0000:0e42:a1ff:feb1:7711",
                "fe80:0000:0000:0000:0e42:a1ff:feg1:7711",
                "fe80::0e42:a1ff:feb1:7711",
                "::ffff:192.168.177.11",
        };
        char gid[40], ipv4[16];

        CHECK(rdma_parse_gid("fe80:0000:0000:0000:0e42:a1ff:feb1:7711", gid, sizeof(gid), ipv4,
                             sizeof(ipv4)) == 0);
        CHECK_STREQ(gid, "fe80:0000:0000:0000:0e42:a1ff:feb1:7711");
        CHECK_STREQ(ipv4, "");
        CHECK(rdma_parse_gid("0000:0000:0000:0000:0000:ffff:c0a8:b10b", gid, sizeof(gid), ipv4,
                             sizeof(ipv4)) == 0);
        CHECK_STREQ(ipv4, "192.168.177.11");
        CHECK(rdma_parse_gid("0000:0000:0000:0000:0000:FFFF:0A00:0001", gid, sizeof(gid), ipv4,
                             sizeof(ipv4)) == 0);
        CHECK_STREQ(gid, "0000:0000:0000:0000:0000:ffff:0a00:0001");
        CHECK_STREQ(ipv4, "10.0.0.1");
        CHECK(rdma_parse_gid("0000:0000:0000:0000:0000:ffff:ffff:ffff", gid, sizeof(gid), ipv4,
                             sizeof(ipv4)) == 0);
        CHECK_STREQ(ipv4, "255.255.255.255");
        /* IPv4-compatible (no ffff) and other ::ffff-looking addresses are not IPv4-mapped. */
        CHECK(rdma_parse_gid("0000:0000:0000:0000:0000:0000:c0a8:b10b", gid, sizeof(gid), ipv4,
                             sizeof(ipv4)) == 0);
        CHECK_STREQ(ipv4, "");
        CHECK(rdma_parse_gid("0000:0000:0000:0001:0000:ffff:c0a8:b10b", gid, sizeof(gid), ipv4,
                             sizeof(ipv4)) == 0);
        CHECK_STREQ(ipv4, "");
        CHECK(rdma_parse_gid(ZERO_GID, gid, sizeof(gid), ipv4, sizeof(ipv4)) == 0);
        CHECK_STREQ(gid, ZERO_GID);
        CHECK(rdma_parse_gid("0000:0000:0000:0000:0000:ffff:c0a8:b10b", gid, sizeof(gid), NULL, 0) == 0);
        CHECK(rdma_parse_gid("0000:0000:0000:0000:0000:ffff:c0a8:b10b", gid, 39, ipv4, sizeof(ipv4)) ==
              -ENOBUFS);
        CHECK(rdma_parse_gid("0000:0000:0000:0000:0000:ffff:c0a8:b10b", gid, sizeof(gid), ipv4, 15) ==
              -ENOBUFS);
        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                CHECK(rdma_parse_gid(bad[i], gid, sizeof(gid), ipv4, sizeof(ipv4)) == -EBADMSG);
}

static void test_gid_type_to_string(void)
{
        CHECK_STREQ(rdma_gid_type_to_string(RDMA_GID_IB), "IB");
        CHECK_STREQ(rdma_gid_type_to_string(RDMA_GID_ROCE_V1), "RoCE v1");
        CHECK_STREQ(rdma_gid_type_to_string(RDMA_GID_ROCE_V2), "RoCE v2");
        CHECK_STREQ(rdma_gid_type_to_string(RDMA_GID_UNKNOWN), "unknown");
        CHECK_STREQ(rdma_gid_type_to_string((enum rdma_gid_type)42), "unknown");
}

static json_object *get(json_object *o, const char *key, json_type type)
{
        json_object *v = NULL;

        if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, type)) {
                fprintf(stderr, "  JSON key %s missing or not of type %s\n", key, json_type_to_name(type));
                return NULL;
        }
        return v;
}

static const char *get_string(json_object *o, const char *key)
{
        json_object *v = get(o, key, json_type_string);

        return v ? json_object_get_string(v) : NULL;
}

static void test_json(void)
{
        static const char *const port_keys[] = { "port",       "state",  "phys_state",
                                                 "link_layer", "rate",   "rate_gbps",
                                                 "active_mtu", "netdev", "roce_v2_ipv4_gid",
                                                 "gids" };
        struct rdma_inventory inv;
        json_object *o, *devices, *dev, *ports, *port, *gids, *gid, *v;

        CHECK(rdma_scan(tree("gid-index-5"), false, &inv) == 0);
        o = rdma_inventory_to_json(&inv);
        devices = get(o, "devices", json_type_array);
        CHECK(devices && json_object_array_length(devices) == 2);
        CHECK(get(o, "warnings", json_type_array) &&
              json_object_array_length(get(o, "warnings", json_type_array)) == 0);
        CHECK_STREQ(get_string(o, "verbs_error"), "");

        dev = devices ? json_object_array_get_idx(devices, 1) : NULL;
        CHECK_STREQ(get_string(dev, "name"), "rocep1s0f1");
        CHECK_STREQ(get_string(dev, "pci"), "0000:01:00.1");
        CHECK_STREQ(get_string(dev, "twin"), "roceP2p1s0f1");
        ports = get(dev, "ports", json_type_array);
        CHECK(ports && json_object_array_length(ports) == 1);
        port = ports ? json_object_array_get_idx(ports, 0) : NULL;
        for (size_t i = 0; i < ARRAY_SIZE(port_keys); i++)
                CHECK(port && json_object_object_get_ex(port, port_keys[i], NULL));
        CHECK(get(port, "port", json_type_int) &&
              json_object_get_int(get(port, "port", json_type_int)) == 1);
        CHECK_STREQ(get_string(port, "state"), "ACTIVE");
        CHECK_STREQ(get_string(port, "phys_state"), "LinkUp");
        CHECK_STREQ(get_string(port, "link_layer"), "Ethernet");
        CHECK_STREQ(get_string(port, "rate"), "200 Gb/sec (4X HDR)");
        v = get(port, "rate_gbps", json_type_int);
        CHECK(v && json_object_get_int(v) == 200);
        CHECK(port && json_object_object_get_ex(port, "active_mtu", &v) && v == NULL); /* null: no verbs */
        CHECK_STREQ(get_string(port, "netdev"), "enp1s0f1np1");
        v = get(port, "roce_v2_ipv4_gid", json_type_int);
        CHECK(v && json_object_get_int(v) == 5);

        gids = get(port, "gids", json_type_array);
        CHECK(gids && json_object_array_length(gids) == 6);
        gid = gids ? json_object_array_get_idx(gids, 5) : NULL;
        v = get(gid, "index", json_type_int);
        CHECK(v && json_object_get_int(v) == 5);
        CHECK_STREQ(get_string(gid, "gid"), "0000:0000:0000:0000:0000:ffff:c0a8:b10b");
        CHECK_STREQ(get_string(gid, "type"), "RoCE v2");
        CHECK_STREQ(get_string(gid, "netdev"), "enp1s0f1np1");
        CHECK_STREQ(get_string(gid, "ipv4"), "192.168.177.11");
        gid = gids ? json_object_array_get_idx(gids, 0) : NULL;
        CHECK_STREQ(get_string(gid, "type"), "RoCE v1");
        CHECK(gid && json_object_object_get_ex(gid, "ipv4", &v) && v == NULL); /* a link-local GID */
        json_object_put(o);
        rdma_inventory_free(&inv);

        /* No RoCE v2 IPv4 GID: null, not -1. */
        CHECK(rdma_scan(tree("gid-missing"), false, &inv) == 0);
        o = rdma_inventory_to_json(&inv);
        devices = get(o, "devices", json_type_array);
        dev = devices ? json_object_array_get_idx(devices, 0) : NULL;
        ports = get(dev, "ports", json_type_array);
        port = ports ? json_object_array_get_idx(ports, 0) : NULL;
        CHECK(port && json_object_object_get_ex(port, "roce_v2_ipv4_gid", &v) && v == NULL);
        json_object_put(o);
        rdma_inventory_free(&inv);

        /* Warnings and unknown GID types come out as they are. */
        CHECK(rdma_scan(tree("malformed"), false, &inv) == 0);
        o = rdma_inventory_to_json(&inv);
        v = get(o, "warnings", json_type_array);
        CHECK(v && json_object_array_length(v) == strv_length(inv.warnings));
        CHECK(v && strcmp(json_object_get_string(json_object_array_get_idx(v, 0)), inv.warnings[0]) == 0);
        devices = get(o, "devices", json_type_array);
        dev = devices ? json_object_array_get_idx(devices, 0) : NULL;
        ports = get(dev, "ports", json_type_array);
        port = ports ? json_object_array_get_idx(ports, 1) : NULL;
        CHECK_STREQ(get_string(port, "state"), "");
        CHECK_STREQ(get_string(port, "link_layer"), "");
        gids = get(port, "gids", json_type_array);
        gid = gids ? json_object_array_get_idx(gids, 0) : NULL;
        CHECK_STREQ(get_string(gid, "type"), "unknown");
        json_object_put(o);
        rdma_inventory_free(&inv);

        /* An empty inventory still has every top-level key. */
        CHECK(rdma_scan(tree("no-such-tree"), false, &inv) == 0);
        o = rdma_inventory_to_json(&inv);
        CHECK(get(o, "devices", json_type_array) &&
              json_object_array_length(get(o, "devices", json_type_array)) == 0);
        CHECK(get(o, "warnings", json_type_array) != NULL);
        CHECK(get(o, "verbs_error", json_type_string) != NULL);
        json_object_put(o);
        rdma_inventory_free(&inv);
}

int main(void)
{
        RUN(test_spark_twins);
        RUN(test_single_port);
        RUN(test_mesh_two_nics);
        RUN(test_direct_fabric);
        RUN(test_gid_index_5);
        RUN(test_soft_roce);
        RUN(test_gid_missing);
        RUN(test_malformed);
        RUN(test_missing_class);
        RUN(test_verbs_never_fatal);
        RUN(test_find);
        RUN(test_rail_faults);
        RUN(test_parse_pcie);
        RUN(test_parse_state);
        RUN(test_parse_rate);
        RUN(test_parse_gid);
        RUN(test_gid_type_to_string);
        RUN(test_json);
        return test_result();
}
