/*
 * Fabric links kept as configured and watched: every fabric netdev (the inventory of netif.c)
 * gets the configured MTU, ports listed in [fabric] down stay administratively down, and every
 * carrier/oper-state change is an event, folded into one link-flapping alert when they come too
 * fast. Reacts to netlink notifications; the daemon's recheck timer (recheck.h) re-checks
 * everything as a safety net. Per-link counters of flaps and corrections are kept in the state
 * directory.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/base/api.h"
#include "daemon/base/store.h"
#include "daemon/config/conf.h"

struct links;

/* store may be NULL (counters then live only as long as the process). */
int links_new(struct event_base *base, struct store *store, struct links **ret);
void links_free(struct links *links);
/* Applies a (new) config: rescans the inventory and enforces at once. */
int links_configure(struct links *links, const struct sparkd_config *config);
/* Enforces and compares every link now (the daemon runs it on its recheck timer). */
void links_recheck(struct links *links);
json_object *links_to_json(struct links *links);

/* A fabric port in use (not kept down), as the other nodes are told of it. */
struct link_port {
        char name[IF_NAMESIZE];
        unsigned mtu;
        char **addresses; /* "ADDR/PREFIX" as the kernel reports them; NULL when none */
};

struct link_ports {
        struct link_port *v;
        size_t n;
};

/* The fabric ports not kept down, in the order of links_to_json(); *ret is freed with
 * link_ports_clear(). */
int links_get_ports(struct links *links, struct link_ports *ret);
void link_ports_clear(struct link_ports *ports);

/* fn is called after every link or address change the kernel reports (re-reads of what depends
 * on them, such as the GID tables). */
void links_set_change_hook(struct links *links, void (*fn)(void *userdata), void *userdata);

/* One address of a link, as the kernel reported it. */
struct link_address {
        char ifname[IF_NAMESIZE];
        char address[64]; /* "ADDR/PREFIX" */
};

struct link_addresses {
        struct link_address *v;
        size_t n;
};

/* The addresses of every link, link by link (once configured, every netdev of the host is a
 * link: the fabric ones and the others). */
int links_addresses(struct links *links, struct link_addresses *out);
void link_addresses_free(struct link_addresses *addresses);

/* A link of the links method's list (the fabric links and those kept down), as the metrics
 * show it. */
struct link_state {
        char name[IF_NAMESIZE];
        bool oper_up;
        unsigned mtu;
        uint64_t flaps;
        uint64_t corrections;
        bool flapping;
};

struct link_states {
        struct link_state *v;
        size_t n;
};

/* The links of the links method's list, in its order (by name); free v. */
int links_states(struct links *links, struct link_states *out);

/* How many of `changes` carrier toggles, going from was_up, were losses of carrier. */
unsigned links_carrier_losses(bool was_up, uint32_t changes);
