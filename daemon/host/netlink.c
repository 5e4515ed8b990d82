#include "netlink.h"

#include <errno.h>
#include <linux/if.h>
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon/base/log.h"

/* Room for a burst of notifications (a flap storm on many links) before the kernel drops any. */
#define NETLINK_RCVBUF (4 * 1024 * 1024)

struct netlink {
        struct event_base *base;
        struct nl_sock *listen_sk;
        struct nl_sock *ctl_sk;
        struct nl_cache_mngr *mngr;
        struct nl_cache *links;
        struct nl_cache *addrs;
        struct event *readable;
        netlink_link_fn on_link;
        void *userdata;
        void (*on_address)(void *userdata);
        void *address_userdata;
        /* The carrier counter last reported per link. libnl reports a notification only when
         * the attributes it compares differ, and a burst of flaps that ends as it began, which
         * the kernel merges into one notification for a physical NIC, differs in this counter
         * alone; the cache holds the new value all the same, so it is looked for there. */
        struct reported_carrier {
                int ifindex;
                uint32_t carrier_changes;
        } * reported;
        size_t n_reported;
};

static int nl_to_errno(int nlerr)
{
        switch (-nlerr) {
        case NLE_NOMEM:
                return -ENOMEM;
        case NLE_PERM:
                return -EPERM;
        case NLE_NODEV:
        case NLE_OBJ_NOTFOUND:
                return -ENODEV;
        case NLE_INVAL:
        case NLE_RANGE:
                return -EINVAL;
        case NLE_BUSY:
                return -EBUSY;
        case NLE_OPNOTSUPP:
                return -EOPNOTSUPP;
        default:
                return -EIO;
        }
}

static void snapshot(struct rtnl_link *l, struct netlink_link *out)
{
        uint32_t changes = 0;

        *out = (struct netlink_link){
                .ifindex = rtnl_link_get_ifindex(l),
                .mtu = rtnl_link_get_mtu(l),
                .flags = rtnl_link_get_flags(l),
                .operstate = rtnl_link_get_operstate(l),
                .has_carrier = rtnl_link_get_carrier(l) == 1,
        };
        if (rtnl_link_get_carrier_changes(l, &changes) == 0)
                out->carrier_changes = changes;
        snprintf(out->name, sizeof(out->name), "%s", rtnl_link_get_name(l) ? rtnl_link_get_name(l) : "");
}

/* The kernel sends RTM_NEWLINK of family AF_INET6 too (IPv6's per-link settings), without the
 * carrier counter and the rest; libnl caches it as a second object of the same link. Only the
 * AF_UNSPEC object describes the link. */
static bool is_link_object(struct nl_object *obj)
{
        return rtnl_link_get_family((struct rtnl_link *)obj) == AF_UNSPEC;
}

static struct reported_carrier *reported_find(struct netlink *nl, int ifindex)
{
        for (size_t i = 0; i < nl->n_reported; i++)
                if (nl->reported[i].ifindex == ifindex)
                        return &nl->reported[i];
        return NULL;
}

/* Remembers what the callback was told; on allocation failure the next sweep reports the link
 * once more, which callers take as a repeat of the same state. */
static void reported_note(struct netlink *nl, const struct netlink_link *link, bool removed)
{
        struct reported_carrier *r = reported_find(nl, link->ifindex), *v;

        if (removed) {
                if (r)
                        *r = nl->reported[--nl->n_reported];
                return;
        }
        if (r) {
                r->carrier_changes = link->carrier_changes;
                return;
        }
        v = realloc(nl->reported, (nl->n_reported + 1) * sizeof(*v));
        if (!v)
                return;
        nl->reported = v;
        nl->reported[nl->n_reported++] =
                (struct reported_carrier){ .ifindex = link->ifindex,
                                           .carrier_changes = link->carrier_changes };
}

static void report(struct netlink *nl, const struct netlink_link *link, bool removed)
{
        reported_note(nl, link, removed);
        nl->on_link(link, removed, nl->userdata);
}

static void on_link_change(struct nl_cache *cache, struct nl_object *obj, int action, void *userdata)
{
        struct netlink *nl = userdata;
        struct netlink_link link;

        if (!is_link_object(obj))
                return;
        snapshot((struct rtnl_link *)obj, &link);
        report(nl, &link, action == NL_ACT_DEL);
}

static void report_cb(struct nl_object *obj, void *userdata)
{
        struct netlink_link link;

        if (!is_link_object(obj))
                return;
        snapshot((struct rtnl_link *)obj, &link);
        report(userdata, &link, false);
}

static void sweep_cb(struct nl_object *obj, void *userdata)
{
        struct netlink *nl = userdata;
        struct netlink_link link;
        struct reported_carrier *r;

        if (!is_link_object(obj))
                return;
        snapshot((struct rtnl_link *)obj, &link);
        r = reported_find(nl, link.ifindex);
        if (!r || r->carrier_changes != link.carrier_changes)
                report(nl, &link, false);
}

static void on_addr_change(struct nl_cache *cache, struct nl_object *obj, int action, void *userdata)
{
        struct netlink *nl = userdata;

        /* The cache itself is what callers read; the hook only learns that it changed. */
        if (nl->on_address)
                nl->on_address(nl->address_userdata);
}

void netlink_set_address_hook(struct netlink *nl, void (*fn)(void *userdata), void *userdata)
{
        nl->on_address = fn;
        nl->address_userdata = userdata;
}

static void foreach_cb(struct nl_object *obj, void *userdata)
{
        struct {
                netlink_link_fn fn;
                void *userdata;
        } *ctx = userdata;
        struct netlink_link link;

        if (!is_link_object(obj))
                return;
        snapshot((struct rtnl_link *)obj, &link);
        ctx->fn(&link, false, ctx->userdata);
}

void netlink_foreach_link(struct netlink *nl, netlink_link_fn fn, void *userdata)
{
        struct {
                netlink_link_fn fn;
                void *userdata;
        } ctx = { fn, userdata };

        nl_cache_foreach(nl->links, foreach_cb, &ctx);
}

static void netlink_resync(struct netlink *nl)
{
        int r;

        /* Notifications were lost: the caches are dumped again and every link is compared anew. */
        r = nl_cache_refill(nl->ctl_sk, nl->links);
        if (r < 0)
                log_error("netlink: cannot re-read links after an overrun: %s", nl_geterror(r));
        r = nl_cache_refill(nl->ctl_sk, nl->addrs);
        if (r < 0)
                log_error("netlink: cannot re-read addresses after an overrun: %s", nl_geterror(r));
        nl_cache_foreach(nl->links, report_cb, nl);
}

static void on_readable(evutil_socket_t fd, short what, void *userdata)
{
        struct netlink *nl = userdata;
        int r = nl_cache_mngr_data_ready(nl->mngr);

        if (r == -NLE_NOMEM || r == -NLE_DUMP_INTR || r == -NLE_MSG_OVERFLOW) {
                log_warning("netlink: notifications were lost (%s); re-reading all links", nl_geterror(r));
                netlink_resync(nl);
        } else if (r < 0) {
                log_warning("netlink: reading notifications failed: %s", nl_geterror(r));
        }
        nl_cache_foreach(nl->links, sweep_cb, nl);
}

int netlink_new(struct event_base *base, netlink_link_fn on_link, void *userdata, struct netlink **ret)
{
        struct netlink *nl = calloc(1, sizeof(*nl));
        int r;

        if (!nl)
                return -ENOMEM;
        nl->base = base;
        nl->on_link = on_link;
        nl->userdata = userdata;

        nl->listen_sk = nl_socket_alloc();
        nl->ctl_sk = nl_socket_alloc();
        if (!nl->listen_sk || !nl->ctl_sk) {
                r = -ENOMEM;
                goto fail;
        }
        r = nl_connect(nl->ctl_sk, NETLINK_ROUTE);
        if (r < 0)
                goto fail_nl;
        r = nl_cache_mngr_alloc(nl->listen_sk, NETLINK_ROUTE, NL_AUTO_PROVIDE, &nl->mngr);
        if (r < 0)
                goto fail_nl;
        r = nl_socket_set_buffer_size(nl->listen_sk, NETLINK_RCVBUF, 0);
        if (r < 0)
                log_warning("netlink: cannot grow the receive buffer: %s", nl_geterror(r));
        r = nl_cache_mngr_add(nl->mngr, "route/link", on_link_change, nl, &nl->links);
        if (r < 0)
                goto fail_nl;
        r = nl_cache_mngr_add(nl->mngr, "route/addr", on_addr_change, nl, &nl->addrs);
        if (r < 0)
                goto fail_nl;
        nl->readable =
                event_new(base, nl_cache_mngr_get_fd(nl->mngr), EV_READ | EV_PERSIST, on_readable, nl);
        if (!nl->readable || event_add(nl->readable, NULL) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        *ret = nl;
        return 0;

fail_nl:
        log_error("netlink: %s", nl_geterror(r));
        r = nl_to_errno(r);
fail:
        netlink_free(nl);
        return r;
}

void netlink_free(struct netlink *nl)
{
        if (!nl)
                return;
        if (nl->readable)
                event_free(nl->readable);
        /* The manager frees its caches and closes the socket it was given, but the socket
         * itself stays ours to free. */
        if (nl->mngr)
                nl_cache_mngr_free(nl->mngr);
        if (nl->listen_sk)
                nl_socket_free(nl->listen_sk);
        if (nl->ctl_sk)
                nl_socket_free(nl->ctl_sk);
        free(nl->reported);
        free(nl);
}

int netlink_query_link(struct netlink *nl, int ifindex, struct netlink_link *out)
{
        struct rtnl_link *l = NULL;
        int r = rtnl_link_get_kernel(nl->ctl_sk, ifindex, NULL, &l);

        if (r < 0)
                return nl_to_errno(r);
        snapshot(l, out);
        rtnl_link_put(l);
        return 0;
}

static int change_link(struct netlink *nl, int ifindex, struct rtnl_link *changes)
{
        /* The request names the link by index only. Passing the cached object instead makes libnl
         * consult the link type's operations, which crashes for a veth that changed namespace. */
        struct rtnl_link *orig = rtnl_link_alloc();
        int r;

        if (!orig)
                return -ENOMEM;
        rtnl_link_set_ifindex(orig, ifindex);
        r = rtnl_link_change(nl->ctl_sk, orig, changes, 0);
        rtnl_link_put(orig);
        return r < 0 ? nl_to_errno(r) : 0;
}

int netlink_set_mtu(struct netlink *nl, int ifindex, unsigned mtu)
{
        struct rtnl_link *changes = rtnl_link_alloc();
        int r;

        if (!changes)
                return -ENOMEM;
        rtnl_link_set_mtu(changes, mtu);
        r = change_link(nl, ifindex, changes);
        rtnl_link_put(changes);
        return r;
}

int netlink_set_admin_up(struct netlink *nl, int ifindex, bool up)
{
        struct rtnl_link *changes = rtnl_link_alloc();
        int r;

        if (!changes)
                return -ENOMEM;
        if (up)
                rtnl_link_set_flags(changes, IFF_UP);
        else
                rtnl_link_unset_flags(changes, IFF_UP);
        r = change_link(nl, ifindex, changes);
        rtnl_link_put(changes);
        return r;
}

struct addr_ctx {
        int ifindex;
        json_object *list;
};

static void addr_cb(struct nl_object *obj, void *userdata)
{
        struct addr_ctx *ctx = userdata;
        struct rtnl_addr *a = (struct rtnl_addr *)obj;
        char buf[128];

        if (rtnl_addr_get_ifindex(a) != ctx->ifindex || !rtnl_addr_get_local(a))
                return;
        nl_addr2str(rtnl_addr_get_local(a), buf, sizeof(buf));
        json_object_array_add(ctx->list, json_object_new_string(buf));
}

json_object *netlink_addresses(struct netlink *nl, int ifindex)
{
        struct addr_ctx ctx = { ifindex, json_object_new_array() };

        nl_cache_foreach(nl->addrs, addr_cb, &ctx);
        return ctx.list;
}

bool netlink_link_is_oper_up(const struct netlink_link *link)
{
        if (link->operstate == IF_OPER_UP)
                return true;
        return link->operstate == IF_OPER_UNKNOWN && (link->flags & IFF_UP) && link->has_carrier;
}

const char *netlink_operstate_to_string(uint8_t operstate)
{
        static const char *const names[] = {
                [IF_OPER_UNKNOWN] = "unknown", [IF_OPER_NOTPRESENT] = "notpresent",
                [IF_OPER_DOWN] = "down",       [IF_OPER_LOWERLAYERDOWN] = "lowerlayerdown",
                [IF_OPER_TESTING] = "testing", [IF_OPER_DORMANT] = "dormant",
                [IF_OPER_UP] = "up",
        };

        return operstate < sizeof(names) / sizeof(names[0]) && names[operstate] ? names[operstate]
                                                                                : "unknown";
}
