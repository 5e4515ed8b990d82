/*
 * The GID watch: which RoCE v2 GID each fabric port's address has, and when that changes. NCCL
 * and the probes name a GID by index; when an address comes or goes or a link flaps, the kernel
 * rebuilds the table and an address may land at another index, and jobs started before fail
 * ("NET/IB: GID table changed"). The table is re-read shortly after every netlink link or address
 * change and, as a backstop (sysfs GID files have no change notification), on the daemon's
 * recheck timer (recheck.h) and on reload. A change is a gid-changed event and marks the environment changed
 * in `status` until the env method is asked again.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "inventory/rdma.h"

/* One Ethernet RDMA port with a netdev: its netdev's IPv4 address and the RoCE v2 GID holding it. */
struct gid_entry {
        char device[64];
        unsigned port;
        char netdev[IF_NAMESIZE];
        char ipv4[16]; /* the netdev's first IPv4 address, "" none */
        int index;     /* the RoCE v2 GID whose IPv4-mapped address is ipv4, -1 none */
};

struct gid_table {
        struct gid_entry *v;
        size_t n;
};

struct gid_change {
        struct gid_entry old, new; /* a port that is not there is {"", -1} on that side */
};

/* The address (no prefix) of ifname into buf, or NULL. */
typedef const char *(*gid_ipv4_fn)(const char *ifname, char *buf, size_t size, void *userdata);

int gid_table_build(const struct rdma_inventory *inv, gid_ipv4_fn ipv4_of, void *userdata,
                    struct gid_table *out);
void gid_table_free(struct gid_table *t);
/* The ports whose netdev, address or GID index differ between old and new, by device and port. */
int gid_table_compare(const struct gid_table *old, const struct gid_table *new, struct gid_change **changes,
                      size_t *n_changes);
/* "rocep1s0f1 port 1 (enp1s0f1np1): 192.168.177.11 moved from GID 3 to GID 5" */
void gid_change_describe(const struct gid_change *c, char *buf, size_t size);

struct gid_watch;
/* Reads the current table (the daemon: RDMA sysfs under its host root, addresses from netlink). */
typedef int (*gid_read_fn)(void *userdata, struct gid_table *out);

int gid_watch_new(struct event_base *base, gid_read_fn read, void *userdata, struct gid_watch **ret);
void gid_watch_free(struct gid_watch *w);
/* A link or address changed: re-read once things settle. */
void gid_watch_poke(struct gid_watch *w);
/* Re-reads now; a change is logged, emitted and kept for status. */
void gid_watch_check(struct gid_watch *w);
/* The env method was asked: environments made from now on match the table. */
void gid_watch_env_served(struct gid_watch *w);
/* gid-changed events since start. */
unsigned gid_watch_changes(const struct gid_watch *w);
/* Moves whenever what gid_watch_to_json says may have changed: what is built from it is current
 * while this is the same. */
uint64_t gid_watch_generation(const struct gid_watch *w);
/* True when an environment was served and the table changed after the last one was: jobs
 * started with it may name a GID index that now holds another address. */
bool gid_watch_env_stale(const struct gid_watch *w);
/* {env_changed_at, env_changed_reason, gid_changes, ports: [{device, port, netdev, ipv4, gid_index}]} */
json_object *gid_watch_to_json(const struct gid_watch *w);
