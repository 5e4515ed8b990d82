/*
 * Every netdev of the host (not only the fabric), classified for choosing the interface that
 * socket traffic (NCCL's bootstrap, Gloo, UCX's and Open MPI's TCP) is pinned to: wireless,
 * bridge, virtual and loopback netdevs are never chosen, and which one holds the IPv4 default
 * route (/proc/net/route) marks the management interface. Read under a host root, so fixture
 * trees work; addresses come from the fabric facts (netlink in the daemon, a file in tests).
 */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

enum hostif_kind {
        HOSTIF_PHYSICAL,
        HOSTIF_WIRELESS, /* class/net/IF/wireless or phy80211 */
        HOSTIF_BRIDGE,   /* class/net/IF/bridge */
        HOSTIF_VIRTUAL,  /* under devices/virtual: veth, tun, docker's and libvirt's ends, bonds, VLANs */
        HOSTIF_LOOPBACK, /* IFF_LOOPBACK in flags */
};

struct hostif {
        char name[IF_NAMESIZE];
        enum hostif_kind kind;
        bool has_default_route;
        unsigned long route_metric; /* of its IPv4 default route, when it has one */
};

struct hostif_list {
        struct hostif *v;
        size_t n;
};

/* Reads HOST_ROOT/sys/class/net and HOST_ROOT/proc/net/route (missing: no default route). */
int hostif_scan(const char *host_root, struct hostif_list *out);
void hostif_list_free(struct hostif_list *list);
/* Classifies ROOT/class/net/NAME; -ENOENT when it is not a netdev directory. */
int hostif_classify(const char *sysfs_root, const char *name, enum hostif_kind *out);
const char *hostif_kind_to_string(enum hostif_kind kind);
const struct hostif *hostif_list_find(const struct hostif_list *list, const char *name);
