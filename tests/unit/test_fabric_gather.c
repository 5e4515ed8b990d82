#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"

#include "daemon/fabric/fabric_gather.h"
#include "test.h"

/* The gatherer's inputs are plain structs: a fixture host with the daemon's state made up. */
static void test_inputs_reach_the_facts(void)
{
        struct link_address addresses[] = {
                { "enp1s0f1np1", "192.168.0.188/24" },
                { "enp1s0f1np1", "fe80::1/64" },
                { "enP7s7", "192.168.0.190/24" },
        };
        struct link_addresses list = { addresses, 3 };
        struct sysctl_state sysctls[] = {
                { .name = "net.core.rmem_max", .wanted = "268435456", .actual = "212992" },
                { .name = "net.core.wmem_max", .wanted = "268435456", .actual = NULL },
        };
        struct sparkd_config config = { .host_root = FIXTURES_DIR "/direct-fabric", .fabric_mtu = 9000 };
        struct fabric_gather_input in = {
                .config = &config,
                .addresses = &list,
                .sysctls = sysctls,
                .n_sysctls = 2,
        };
        struct fabric_facts f;
        char ipv4[16];

        CHECK(fabric_gather(&in, &f) == 0);
        CHECK(f.netifs.n > 0);
        CHECK(f.mtu_wanted == 9000);
        CHECK(f.memlock_daemon > 0);
        CHECK(f.n_addresses == 3);
        CHECK_STREQ(fabric_ipv4_of(&f, "enp1s0f1np1", ipv4, sizeof(ipv4)), "192.168.0.188");
        CHECK(fabric_has_address(&f, "enP7s7"));
        CHECK(f.n_sysctls == 2);
        if (f.n_sysctls == 2) {
                CHECK_STREQ(f.sysctls[0].actual, "212992");
                CHECK_STREQ(f.sysctls[1].actual, "");
        }
        CHECK(!f.peers && !f.rail_verdicts);
        fabric_facts_free(&f);
}

/* With an AER watch, the first look has no earlier one and the second counts from it. */
static void test_aer_watch_looks(void)
{
        struct sparkd_config config = { .host_root = FIXTURES_DIR "/spark-twins" };
        struct aer_watch *w = NULL;
        struct fabric_gather_input in = { .config = &config };
        struct fabric_facts f;
        size_t seen = 0;

        CHECK(aer_watch_new(&w) == 0);
        in.aer_watch = w;
        for (int look = 0; look < 2; look++) {
                CHECK(fabric_gather(&in, &f) == 0);
                for (size_t i = 0; i < f.rdma.n; i++)
                        if (f.rdma.v[i].pcie.has_aer) {
                                CHECK(f.rdma.v[i].pcie.aer_fatal_since_last == (look ? 0 : -1));
                                seen++;
                        }
                fabric_facts_free(&f);
        }
        CHECK(seen > 0);
        aer_watch_free(w);
}

static const char *rdma_twin_of(const struct fabric_facts *f, const char *dev)
{
        const struct rdma_device *d = rdma_find_device(&f->rdma, dev);

        return d ? d->twin : "(no such device)";
}

static const char *netif_twin_of(const struct fabric_facts *f, const char *name)
{
        const struct netif *n = netif_list_find(&f->netifs, name);

        return n ? n->twin : "(no such netdev)";
}

/* Soft-RoCE devices have no PCI function to pair by: [probe] rdma_twins pairs them, and their
 * netdevs with them, for the doctor and the environment as much as for the probe. */
static void test_configured_twins(void)
{
        struct sparkd_config config = { .host_root = FIXTURES_DIR "/soft-roce" };
        struct fabric_gather_input in = { .config = &config };
        struct fabric_facts f;

        CHECK(fabric_gather(&in, &f) == 0);
        CHECK_STREQ(rdma_twin_of(&f, "rxe_a0"), "");
        CHECK_STREQ(netif_twin_of(&f, "a0"), "");
        fabric_facts_free(&f);

        snprintf(config.probe_rdma_twins, sizeof(config.probe_rdma_twins), "rxe_a1,rxe_a0");
        CHECK(fabric_gather(&in, &f) == 0);
        CHECK_STREQ(rdma_twin_of(&f, "rxe_a0"), "rxe_a1");
        CHECK_STREQ(rdma_twin_of(&f, "rxe_a1"), "rxe_a0");
        CHECK_STREQ(netif_twin_of(&f, "a0"), "a1");
        CHECK_STREQ(netif_twin_of(&f, "a1"), "a0");
        CHECK(strv_length(f.rdma.warnings) == 0);
        fabric_facts_free(&f);

        /* A name this node lacks leaves the PCI pairing and says which name. */
        snprintf(config.probe_rdma_twins, sizeof(config.probe_rdma_twins), "rxe_a0,mlx5_9");
        CHECK(fabric_gather(&in, &f) == 0);
        CHECK_STREQ(rdma_twin_of(&f, "rxe_a0"), "");
        CHECK(strv_length(f.rdma.warnings) == 1);
        if (strv_length(f.rdma.warnings) == 1)
                CHECK(strstr(f.rdma.warnings[0], "rdma_twins names mlx5_9") != NULL);
        fabric_facts_free(&f);
}

/* On a Spark the configured pair replaces the PCI one: the devices left alone lose their twin
 * rather than keep half a pair. */
static void test_configured_twins_replace_pci_pairs(void)
{
        struct sparkd_config config = { .host_root = FIXTURES_DIR "/spark-twins" };
        struct fabric_gather_input in = { .config = &config };
        struct fabric_facts f;
        const char *a, *b, *old_a, *old_b;

        CHECK(fabric_gather(&in, &f) == 0);
        CHECK(f.rdma.n >= 4);
        if (f.rdma.n < 4) {
                fabric_facts_free(&f);
                return;
        }
        /* Two devices that PCI pairs with others. */
        a = f.rdma.v[0].name;
        old_a = f.rdma.v[0].twin;
        CHECK(old_a[0] != '\0');
        b = NULL;
        for (size_t i = 1; i < f.rdma.n; i++)
                if (strcmp(f.rdma.v[i].name, old_a) != 0 && f.rdma.v[i].twin[0]) {
                        b = f.rdma.v[i].name;
                        break;
                }
        CHECK(b != NULL);
        if (!b) {
                fabric_facts_free(&f);
                return;
        }
        snprintf(config.probe_rdma_twins, sizeof(config.probe_rdma_twins), "%s,%s", a, b);
        old_b = rdma_twin_of(&f, b);
        {
                char keep_a[64], keep_b[64];
                struct fabric_facts g;

                snprintf(keep_a, sizeof(keep_a), "%s", old_a);
                snprintf(keep_b, sizeof(keep_b), "%s", old_b);
                CHECK(fabric_gather(&in, &g) == 0);
                CHECK_STREQ(rdma_twin_of(&g, a), b);
                CHECK_STREQ(rdma_twin_of(&g, b), a);
                CHECK_STREQ(rdma_twin_of(&g, keep_a), "");
                CHECK_STREQ(rdma_twin_of(&g, keep_b), "");
                fabric_facts_free(&g);
        }
        fabric_facts_free(&f);
}

int main(void)
{
        RUN(test_inputs_reach_the_facts);
        RUN(test_aer_watch_looks);
        RUN(test_configured_twins);
        RUN(test_configured_twins_replace_pci_pairs);
        return test_result();
}
