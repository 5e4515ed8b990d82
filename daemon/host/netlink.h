/*
 * The one owner of rtnetlink: libnl-3's cache manager keeps link and address caches current
 * from kernel notifications (no polling) on the daemon's loop, and a second socket makes the
 * changes sparkd enforces. Callers see plain link snapshots. When the kernel drops
 * notifications (ENOBUFS), the caches are dumped again and every link is reported afresh, so an
 * overrun costs a resynchronisation, never a missed change.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

struct netlink;

struct netlink_link {
        int ifindex;
        char name[IF_NAMESIZE];
        unsigned mtu;
        unsigned flags;    /* IFF_* */
        uint8_t operstate; /* IF_OPER_* */
        bool has_carrier;
        uint32_t carrier_changes; /* the kernel's count, across event coalescing */
};

/* removed: the link is gone (info holds its last state). */
typedef void (*netlink_link_fn)(const struct netlink_link *link, bool removed, void *userdata);

int netlink_new(struct event_base *base, netlink_link_fn on_link, void *userdata, struct netlink **ret);
void netlink_free(struct netlink *nl);

/* Called after every address added or removed (the address cache is then current). */
void netlink_set_address_hook(struct netlink *nl, void (*fn)(void *userdata), void *userdata);

/* Calls fn for every link in the cache, as if each had just been reported. */
void netlink_foreach_link(struct netlink *nl, netlink_link_fn fn, void *userdata);

/* Asks the kernel for the link's state now. Notifications queue up, so one may describe a state
 * already gone; a correction is decided on this fresh state, never on a stale notification. */
int netlink_query_link(struct netlink *nl, int ifindex, struct netlink_link *out);

/* Return 0 or a negative errno. */
int netlink_set_mtu(struct netlink *nl, int ifindex, unsigned mtu);
int netlink_set_admin_up(struct netlink *nl, int ifindex, bool up);

/* The addresses on a link as "ADDR/PREFIX" strings. */
json_object *netlink_addresses(struct netlink *nl, int ifindex);

/* Is the link carrying traffic? operstate UP, or UNKNOWN with IFF_UP and a carrier (drivers
 * that do not report operstate). */
bool netlink_link_is_oper_up(const struct netlink_link *link);
const char *netlink_operstate_to_string(uint8_t operstate);
