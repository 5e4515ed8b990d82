#include <stdlib.h>

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

int main(void)
{
        RUN(test_inputs_reach_the_facts);
        RUN(test_aer_watch_looks);
        return test_result();
}
