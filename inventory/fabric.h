/*
 * Everything sparkd knows about this node's fabric at one moment, gathered in one struct so the
 * NCCL environment (envgen.c) and the checks (doctor.c) are pure functions of it: the fabric
 * netdevs (netif.c), the RDMA devices and GIDs (rdma.c), the driver, GPU and library facts
 * (hostfacts.c), every netdev of the host classified with its default route (hostif.c), the addresses on
 * each netdev (from netlink in the daemon, from a file in tests), the NetworkManager and netplan profiles
 * (netprofile.c), the daemon's own memlock limit (and whether systemd set it), the machine it is
 * built for, and the state of the sysctls it keeps.
 */
#pragma once

#include <json-c/json.h>
#include <net/if.h>
#include <stdint.h>

#include "hostfacts.h"
#include "hostif.h"
#include "netif.h"
#include "netprofile.h"
#include "port_counters.h"
#include "rdma.h"

struct fabric_address {
        char ifname[IF_NAMESIZE];
        char address[64]; /* "192.168.177.11/24" */
};

struct fabric_sysctl {
        char name[128];
        char wanted[128];
        char actual[128]; /* "" when unreadable */
};

struct fabric_facts {
        struct netif_list netifs;
        struct hostif_list hostifs; /* every netdev of the host, classified (hostif.c) */
        struct rdma_inventory rdma;
        struct port_counter_list counters; /* every RDMA port's error and traffic counters */
        struct hostfacts host;
        struct netprofiles profiles; /* NetworkManager and netplan profiles under the host root */
        struct fabric_address *addresses;
        size_t n_addresses;
        uint64_t memlock_daemon; /* bytes, HOSTFACTS_UNLIMITED for unlimited */
        /* The machine the daemon is built for (elf_machine_self, which fabric_facts_read sets):
         * NCCL must be built for it to be loaded by the jobs and the nccl probe here. */
        struct elf_machine daemon_machine;
        bool is_daemon_under_systemd; /* sparkd's limits come from its unit, not from a shell */
        bool is_rdma_declared_off;    /* [fabric] rdma = no: the fabric carries TCP sockets only */
        const char *ring_merge_nics;  /* [fabric] ring_merge_nics: "0", "1", or NULL (auto) */
        unsigned mtu_wanted;
        struct fabric_sysctl *sysctls;
        size_t n_sysctls;
        json_object *peers;         /* the peers method's result, owned; NULL: not known (offline) */
        json_object *rail_verdicts; /* probes_rail_verdicts(), owned; NULL: not known (offline) */
        /* The up nodes' software sections (software.h), this node first: [{node_id, name,
         * software}], owned; NULL: not known (offline). */
        json_object *software_nodes;
        /* The firewall checks with peers: [{peer, iface, ...}] (firewall_check.h), owned; NULL:
         * not known (offline). */
        json_object *firewall;
        /* "running" | "absent" (not running) | "not installed: WHY" (liblldpctl cannot be loaded)
         * | "error: TEXT", owned; NULL: not known (offline) */
        char *lldpd_status;
        json_object *topology; /* the cluster's topology map, owned; NULL: not known */
        /* Names more than one node id carries in the cluster view: [{name, node_ids, head}],
         * owned; NULL: not known. */
        json_object *name_clashes;
        char self_id[64]; /* this node's id in the map and the peers' results; "" unknown */
};

/* Reads sysfs, RDMA and host facts under host_root. Addresses, memlock and sysctls are added
 * by the caller. use_verbs: see rdma_scan. */
int fabric_facts_read(const char *host_root, char *const *patterns, bool use_verbs,
                      struct fabric_facts *out);
void fabric_facts_free(struct fabric_facts *facts);
int fabric_facts_add_address(struct fabric_facts *facts, const char *ifname, const char *address);
/* Makes RDMA devices dev_a and dev_b twins, and their ports' netdevs too, in place of what the
 * PCI addresses say: soft-RoCE devices and NICs whose halves are not Spark-style PCI functions
 * have nothing to pair by, and the owner knows ([probe] rdma_twins). A device that was another's
 * twin leaves that pair. -ENOENT (and a line in the RDMA warnings naming it) when either device is
 * not on this node, -EINVAL when both names are one device. */
int fabric_facts_pair_twins(struct fabric_facts *facts, const char *dev_a, const char *dev_b);
int fabric_facts_add_sysctl(struct fabric_facts *facts, const char *name, const char *wanted,
                            const char *actual);
/* Loads "IFNAME ADDRESS/PREFIX" lines (tests model a host's addresses this way). */
int fabric_facts_load_addresses(struct fabric_facts *facts, const char *path);

/* Does facts hold an address of ifname? */
bool fabric_has_address(const struct fabric_facts *facts, const char *ifname);
/* The first IPv4 address (without prefix) on ifname, or NULL. */
const char *fabric_ipv4_of(const struct fabric_facts *facts, const char *ifname, char *buf, size_t size);
json_object *fabric_facts_to_json(const struct fabric_facts *facts);
