/*
 * One look at this node's fabric facts (inventory/fabric.h) inside the daemon: what sysfs and
 * the host show under the host root, completed with what the daemon's own modules keep (the
 * links' addresses, the sysctls' states, the AER counts of earlier looks). The gatherer takes
 * those as explicit inputs; the sources struct names the modules once, so that everything that
 * needs facts (the fabric methods, the probes, the GID watch) reads them the same way.
 */
#pragma once

#include <stddef.h>

#include "daemon/config/conf.h"
#include "daemon/host/aer_watch.h"
#include "daemon/host/counter_watch.h"
#include "daemon/host/gid_watch.h"
#include "daemon/host/links.h"
#include "daemon/host/sysctl.h"
#include "inventory/fabric.h"

struct fabric_gather_input {
        const struct sparkd_config *config; /* host root, fabric patterns, wanted MTU */
        /* Every netdev's addresses: where the fabric has none, envgen pins socket traffic to the
         * management interface by them. */
        const struct link_addresses *addresses;
        const struct sysctl_state *sysctls;
        size_t n_sysctls;
        struct aer_watch *aer_watch; /* NULL: no comparison with earlier looks */
        bool is_under_systemd;       /* the daemon's limits come from its unit */
        /* The port counters' rises, rates and alarms over its window; NULL: the counters as read */
        const struct counter_watch *counter_watch;
};

/* Fills *out (fabric_facts_free frees it); peers and rail verdicts are left to the caller. */
int fabric_gather(const struct fabric_gather_input *in, struct fabric_facts *out);

/* The daemon's modules the facts are read from. The owner keeps config at the running one. */
struct fabric_sources {
        const struct sparkd_config *config;
        struct links *links;
        struct sysctl_keeper *sysctls;
        struct aer_watch *aer_watch;
        const struct counter_watch *counter_watch;
};

/* Takes the modules' state now and gathers; sources is a struct fabric_sources (this is a
 * probes_facts_fn). */
int fabric_sources_gather(void *sources, struct fabric_facts *out);
/* The GID choice of every fabric port now; sources is a struct fabric_sources (a gid_read_fn). */
int fabric_sources_gid_table(void *sources, struct gid_table *out);
