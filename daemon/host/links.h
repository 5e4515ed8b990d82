/*
 * Fabric links kept as configured and watched: every fabric netdev (the inventory of netif.c)
 * gets the configured MTU, ports listed in [fabric] down stay administratively down, and every
 * carrier/oper-state change is an event, folded into one link-flapping alert when they come too
 * fast. Reacts to netlink notifications; a timer re-checks everything as a safety net. Per-link
 * counters of flaps and corrections are kept in the state directory.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>
#include <net/if.h>
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
/* Enforces and compares every link now (also done by the recheck timer). */
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

/* Calls fn for every address on every link the kernel reported ("ADDR/PREFIX"). */
void links_foreach_address(struct links *links,
                           void (*fn)(const char *ifname, const char *address, void *userdata),
                           void *userdata);
/* The same for one netdev of the host by name, fabric or not (none when it does not exist). */
void links_foreach_address_of(struct links *links, const char *ifname,
                              void (*fn)(const char *ifname, const char *address, void *userdata),
                              void *userdata);

/* How many of `changes` carrier toggles, going from was_up, were losses of carrier. */
unsigned links_carrier_losses(bool was_up, uint32_t changes);
