#include "fabric_gather.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/macro.h"

static void add_addresses(struct fabric_facts *f, const struct link_addresses *addresses)
{
        for (size_t i = 0; addresses && i < addresses->n; i++)
                (void)fabric_facts_add_address(f, addresses->v[i].ifname, addresses->v[i].address);
}

int fabric_gather(const struct fabric_gather_input *in, struct fabric_facts *f)
{
        const struct sparkd_config *c = in->config;
        /* libibverbs sees only the running system: ask it only when that is what is read. */
        bool is_real_host = strcmp(c->host_root, "/") == 0;
        struct rlimit rl;
        int r;

        r = fabric_facts_read(c->host_root, c->fabric_patterns, is_real_host, f);
        if (r < 0)
                return r;
        if (c->probe_rdma_twins[0]) {
                char twins[sizeof(c->probe_rdma_twins)], *comma;

                snprintf(twins, sizeof(twins), "%s", c->probe_rdma_twins);
                comma = strchr(twins, ',');
                if (comma) {
                        *comma = '\0';
                        /* A device the config names but this node lacks is a warning in the facts:
                         * the doctor shows it, the PCI pairing stands. */
                        r = fabric_facts_pair_twins(f, twins, comma + 1);
                        if (r == -ENOMEM) {
                                fabric_facts_free(f);
                                return r;
                        }
                }
        }
        if (in->aer_watch && aer_watch_observe(in->aer_watch, &f->rdma) < 0) {
                fabric_facts_free(f);
                return -ENOMEM;
        }
        if (in->counter_watch)
                counter_watch_annotate(in->counter_watch, &f->counters);
        add_addresses(f, in->addresses);
        if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
                f->memlock_daemon =
                        rl.rlim_cur == RLIM_INFINITY ? HOSTFACTS_UNLIMITED : (uint64_t)rl.rlim_cur;
        f->is_daemon_under_systemd = in->is_under_systemd;
        f->mtu_wanted = c->fabric_mtu;
        f->is_rdma_declared_off = !c->fabric_rdma;
        f->ring_merge_nics = c->ring_merge_nics < 0 ? NULL : c->ring_merge_nics ? "1" : "0";
        for (size_t i = 0; i < in->n_sysctls; i++)
                (void)fabric_facts_add_sysctl(f, in->sysctls[i].name, in->sysctls[i].wanted,
                                              in->sysctls[i].actual);
        return 0;
}

int fabric_sources_gather(void *sources, struct fabric_facts *out)
{
        const struct fabric_sources *s = sources;
        struct link_addresses addresses = { 0 };
        _cleanup_free_ struct sysctl_state *sysctls = NULL;
        /* systemd sets INVOCATION_ID in every unit it starts; a shell does not. */
        struct fabric_gather_input in = { .config = s->config,
                                          .addresses = &addresses,
                                          .aer_watch = s->aer_watch,
                                          .is_under_systemd = getenv("INVOCATION_ID") != NULL,
                                          .counter_watch = s->counter_watch };
        int r;

        r = links_addresses(s->links, &addresses);
        if (r < 0)
                return r;
        r = sysctl_keeper_states(s->sysctls, &sysctls, &in.n_sysctls);
        if (r >= 0) {
                in.sysctls = sysctls;
                r = fabric_gather(&in, out);
        }
        link_addresses_free(&addresses);
        return r;
}

static const char *ipv4_of(const char *ifname, char *buf, size_t size, void *userdata)
{
        return fabric_ipv4_of(userdata, ifname, buf, size);
}

int fabric_sources_gid_table(void *sources, struct gid_table *out)
{
        const struct fabric_sources *s = sources;
        struct link_addresses addresses = { 0 };
        struct fabric_facts f = { 0 };
        int r;

        /* Only what the GID choice depends on: the RDMA tables and the netdevs' addresses. */
        r = rdma_scan(s->config->sysfs_root, false, &f.rdma);
        if (r < 0)
                return r;
        r = links_addresses(s->links, &addresses);
        if (r >= 0) {
                add_addresses(&f, &addresses);
                r = gid_table_build(&f.rdma, ipv4_of, &f, out);
        }
        link_addresses_free(&addresses);
        fabric_facts_free(&f);
        return r;
}
