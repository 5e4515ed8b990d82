#include "links.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"
#include "inventory/netif.h"
#include "inventory/sysfs.h"
#include "link_counters.h"
#include "link_enforce.h"
#include "link_oper.h"
#include "link_state.h"
#include "netlink.h"

#define SAVE_DELAY_SEC 1

struct links {
        struct event_base *base;
        struct link_counters counters;
        struct netlink *nl;
        struct event *save_timer;
        void (*on_change)(void *userdata);
        void *change_userdata;
        struct link **v;
        size_t n;

        enum enforce_mode mode;
        unsigned mtu;
        char **patterns;
        char **down;
        unsigned flap_threshold;
        uint64_t flap_window_usec;
        char *sysfs_root;
        bool configured;
};

unsigned links_carrier_losses(bool was_up, uint32_t changes)
{
        /* Toggles alternate: from up they go down, up, down...; from down, up, down, up... */
        return was_up ? (changes + 1) / 2 : changes / 2;
}

static struct link *links_find(struct links *ls, int ifindex)
{
        for (size_t i = 0; i < ls->n; i++)
                if (ls->v[i]->ifindex == ifindex)
                        return ls->v[i];
        return NULL;
}

static void links_schedule_save(struct links *ls)
{
        struct timeval tv = { .tv_sec = SAVE_DELAY_SEC };

        /* Counters change in bursts (a flap storm); one write per second at most. */
        if (ls->counters.store && !evtimer_pending(ls->save_timer, NULL))
                evtimer_add(ls->save_timer, &tv);
}

static void on_save_timer(evutil_socket_t fd, short what, void *userdata)
{
        struct links *ls = userdata;

        link_counters_save(&ls->counters, ls->v, ls->n);
}

static void links_enforce(struct links *ls, struct link *l)
{
        struct link_policy policy = { .nl = ls->nl, .mode = ls->mode, .mtu = ls->mtu };

        if (link_enforce(&policy, l))
                links_schedule_save(ls);
}

/* ---- one link ---- */

static void link_free(struct link *l)
{
        if (!l)
                return;
        if (l->stable_timer)
                event_free(l->stable_timer);
        flap_done(&l->flap);
        strv_free(l->rdma_devices);
        free(l);
}

static void link_apply_inventory(struct links *ls, struct link *l, const struct netif_list *inventory)
{
        const struct netif *n = netif_list_find(inventory, l->name);

        l->is_fabric = n != NULL;
        l->want_down = strv_contains(ls->down, l->name);
        l->twin[0] = '\0';
        l->pci[0] = '\0';
        l->dev_port = 0;
        l->mac[0] = '\0';
        strv_free(l->rdma_devices);
        l->rdma_devices = NULL;
        l->speed_mbps = -1;
        if (!n)
                return;
        snprintf(l->twin, sizeof(l->twin), "%s", n->twin);
        snprintf(l->pci, sizeof(l->pci), "%s", n->pci);
        l->dev_port = n->dev_port;
        snprintf(l->mac, sizeof(l->mac), "%s", n->mac);
        for (char **d = n->rdma_devices; d && *d; d++)
                (void)strv_push(&l->rdma_devices, *d);
        l->speed_mbps = n->speed_mbps;
}

static void link_read_speed(struct links *ls, struct link *l)
{
        char buf[32];

        l->speed_mbps = -1;
        if (sysfs_read(ls->sysfs_root, buf, sizeof(buf), "class/net/%s/speed", l->name) == 0 &&
            buf[0] >= '1' && buf[0] <= '9')
                l->speed_mbps = strtoll(buf, NULL, 10);
}

static void link_update(struct links *ls, struct link *l, const struct netlink_link *now)
{
        bool was_carrier = l->seen.has_carrier;
        uint32_t changes = now->carrier_changes - l->seen.carrier_changes;
        bool oper_changed = netlink_link_is_oper_up(now) != l->is_oper_up;
        unsigned losses;

        if (strcmp(l->name, now->name) != 0)
                snprintf(l->name, sizeof(l->name), "%s", now->name);
        /* The kernel merges notifications that come fast; its carrier counter does not. */
        if (changes == 0 && oper_changed)
                changes = 1;
        losses = links_carrier_losses(was_carrier, now->carrier_changes - l->seen.carrier_changes);
        if (losses) {
                l->flaps += losses;
                l->flaps_since_start += losses;
                links_schedule_save(ls);
        }
        if (l->is_fabric && (oper_changed || changes > 0))
                link_note_oper_change(l, now, changes);
        else
                l->is_oper_up = netlink_link_is_oper_up(now);
        if (oper_changed)
                link_read_speed(ls, l);
        l->seen = *now;
        links_enforce(ls, l);
}

static struct link *link_new(struct links *ls, const struct netlink_link *now,
                             const struct netif_list *inventory)
{
        struct link *l = calloc(1, sizeof(*l));
        struct link **v;

        if (!l)
                return NULL;
        l->owner = ls;
        l->ifindex = now->ifindex;
        snprintf(l->name, sizeof(l->name), "%s", now->name);
        l->seen = *now;
        l->is_oper_up = netlink_link_is_oper_up(now);
        l->stable_timer = evtimer_new(ls->base, link_on_stable_timer, l);
        v = realloc(ls->v, (ls->n + 1) * sizeof(*v));
        if (!l->stable_timer || !v || flap_init(&l->flap, ls->flap_threshold, ls->flap_window_usec) < 0) {
                if (v)
                        ls->v = v;
                link_free(l);
                return NULL;
        }
        ls->v = v;
        ls->v[ls->n++] = l;
        link_apply_inventory(ls, l, inventory);
        link_counters_take(&ls->counters, l);
        return l;
}

static void links_remove(struct links *ls, struct link *l)
{
        for (size_t i = 0; i < ls->n; i++) {
                if (ls->v[i] != l)
                        continue;
                if (l->flaps || l->corrections)
                        (void)link_counters_hold(&ls->counters, l->name, l->flaps, l->corrections);
                ls->v[i] = ls->v[--ls->n];
                link_free(l);
                return;
        }
}

static void on_netlink_link(const struct netlink_link *now, bool removed, void *userdata)
{
        struct links *ls = userdata;
        struct link *l = links_find(ls, now->ifindex);

        if (!ls->configured)
                return;
        if (ls->on_change)
                ls->on_change(ls->change_userdata);
        if (removed) {
                if (l) {
                        if (l->is_fabric)
                                log_notice("%s is gone", l->name);
                        links_remove(ls, l);
                }
                return;
        }
        if (!l) {
                struct netif_list inventory;

                /* A link we have not seen: new hardware, a renamed or re-created netdev. */
                if (netif_scan(ls->sysfs_root, ls->patterns, &inventory) < 0)
                        inventory = (struct netif_list){ 0 };
                l = link_new(ls, now, &inventory);
                netif_list_free(&inventory);
                if (!l) {
                        log_error("cannot track link %s: out of memory", now->name);
                        return;
                }
                if (l->is_fabric)
                        log_notice("%s appeared (%s)", l->name, l->is_oper_up ? "up" : "down");
                links_enforce(ls, l);
                return;
        }
        link_update(ls, l, now);
}

/* ---- the whole set ---- */

static void on_netlink_address(void *userdata)
{
        struct links *ls = userdata;

        if (ls->on_change)
                ls->on_change(ls->change_userdata);
}

void links_set_change_hook(struct links *ls, void (*fn)(void *userdata), void *userdata)
{
        ls->on_change = fn;
        ls->change_userdata = userdata;
}

int links_new(struct event_base *base, struct store *store, struct links **ret)
{
        struct links *ls = calloc(1, sizeof(*ls));
        int r;

        if (!ls)
                return -ENOMEM;
        ls->base = base;
        ls->counters.store = store;
        ls->save_timer = evtimer_new(base, on_save_timer, ls);
        if (!ls->save_timer) {
                links_free(ls);
                return -ENOMEM;
        }
        link_counters_load(&ls->counters);
        r = netlink_new(base, on_netlink_link, ls, &ls->nl);
        if (r < 0) {
                links_free(ls);
                return r;
        }
        netlink_set_address_hook(ls->nl, on_netlink_address, ls);
        *ret = ls;
        return 0;
}

void links_free(struct links *ls)
{
        if (!ls)
                return;
        /* Counters changed since the last save are written before the daemon goes. */
        if (ls->save_timer && evtimer_pending(ls->save_timer, NULL))
                link_counters_save(&ls->counters, ls->v, ls->n);
        netlink_free(ls->nl);
        for (size_t i = 0; i < ls->n; i++)
                link_free(ls->v[i]);
        free(ls->v);
        link_counters_done(&ls->counters);
        if (ls->save_timer)
                event_free(ls->save_timer);
        strv_free(ls->patterns);
        strv_free(ls->down);
        free(ls->sysfs_root);
        free(ls);
}

static void on_initial_link(const struct netlink_link *now, bool removed, void *userdata)
{
        struct links *ls = userdata;

        if (!links_find(ls, now->ifindex))
                on_netlink_link(now, false, ls);
}

int links_configure(struct links *ls, const struct sparkd_config *c)
{
        struct netif_list inventory;
        char *root = strdup(c->sysfs_root);
        int r;

        if (!root || strv_copy(c->fabric_patterns, &ls->patterns) < 0 ||
            strv_copy(c->fabric_down, &ls->down) < 0) {
                free(root);
                return -ENOMEM;
        }
        free(ls->sysfs_root);
        ls->sysfs_root = root;
        ls->mode = c->mode;
        ls->mtu = c->fabric_mtu;
        ls->flap_threshold = c->flap_threshold;
        ls->flap_window_usec = c->flap_window_usec;

        r = netif_scan(ls->sysfs_root, ls->patterns, &inventory);
        if (r < 0) {
                log_error("cannot read the interface inventory under %s: %s", ls->sysfs_root, strerror(-r));
                inventory = (struct netif_list){ 0 };
        }
        for (size_t i = 0; i < ls->n; i++) {
                struct link *l = ls->v[i];

                link_apply_inventory(ls, l, &inventory);
                (void)flap_reconfigure(&l->flap, ls->flap_threshold, ls->flap_window_usec);
                /* A new mode or MTU is reported afresh. */
                l->mtu_drift_logged = 0;
                l->admin_drift_logged = false;
        }
        netif_list_free(&inventory);

        if (!ls->configured) {
                ls->configured = true;
                netlink_foreach_link(ls->nl, on_initial_link, ls);
        }
        links_recheck(ls);
        return 0;
}

void links_recheck(struct links *ls)
{
        for (size_t i = 0; i < ls->n; i++)
                links_enforce(ls, ls->v[i]);
}

static json_object *link_to_json(struct links *ls, const struct link *l)
{
        json_object *o = json_object_new_object(), *devs = json_object_new_array(),
                    *drift = json_object_new_array();
        bool admin_up = l->seen.flags & IFF_UP;

        for (char **d = l->rdma_devices; d && *d; d++)
                json_object_array_add(devs, json_object_new_string(*d));
        if (l->is_fabric && !l->want_down && l->seen.mtu != ls->mtu)
                json_object_array_add(drift, json_object_new_string("mtu"));
        if (l->want_down && admin_up)
                json_object_array_add(drift, json_object_new_string("admin-state"));

        json_object_object_add(o, "name", json_object_new_string(l->name));
        json_object_object_add(o, "ifindex", json_object_new_int(l->ifindex));
        json_object_object_add(o, "twin", l->twin[0] ? json_object_new_string(l->twin) : NULL);
        json_object_object_add(o, "mac", l->mac[0] ? json_object_new_string(l->mac) : NULL);
        json_object_object_add(o, "pci", l->pci[0] ? json_object_new_string(l->pci) : NULL);
        json_object_object_add(o, "dev_port", json_object_new_int(l->dev_port));
        json_object_object_add(o, "rdma_devices", devs);
        json_object_object_add(o, "admin_up", json_object_new_boolean(admin_up));
        json_object_object_add(o, "oper_up", json_object_new_boolean(l->is_oper_up));
        json_object_object_add(o, "operstate",
                               json_object_new_string(netlink_operstate_to_string(l->seen.operstate)));
        json_object_object_add(o, "carrier", json_object_new_boolean(l->seen.has_carrier));
        json_object_object_add(o, "mtu", json_object_new_int((int)l->seen.mtu));
        json_object_object_add(o, "mtu_wanted", l->want_down ? NULL : json_object_new_int((int)ls->mtu));
        json_object_object_add(o, "keep_down", json_object_new_boolean(l->want_down));
        json_object_object_add(o, "speed_mbps",
                               l->speed_mbps > 0 ? json_object_new_int64(l->speed_mbps) : NULL);
        json_object_object_add(o, "addresses", netlink_addresses(ls->nl, l->ifindex));
        json_object_object_add(o, "flaps", json_object_new_int64((int64_t)l->flaps));
        json_object_object_add(o, "flaps_since_start", json_object_new_int64((int64_t)l->flaps_since_start));
        json_object_object_add(o, "corrections", json_object_new_int64((int64_t)l->corrections));
        json_object_object_add(o, "flapping", json_object_new_boolean(l->flap.is_flapping));
        json_object_object_add(o, "drift", drift);
        if (l->last_change) {
                char when[32];
                struct tm tm;

                gmtime_r(&l->last_change, &tm);
                strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
                json_object_object_add(o, "last_change", json_object_new_string(when));
        } else {
                json_object_object_add(o, "last_change", NULL);
        }
        if (l->mtu_error || l->admin_error)
                json_object_object_add(
                        o, "error",
                        json_object_new_string(strerror(-(l->mtu_error ? l->mtu_error : l->admin_error))));
        return o;
}

static int link_compare(const void *a, const void *b)
{
        return strcmp((*(struct link *const *)a)->name, (*(struct link *const *)b)->name);
}

json_object *links_to_json(struct links *ls)
{
        json_object *list = json_object_new_array();

        /* qsort's base must not be NULL, even for no element. */
        if (ls->n > 1)
                qsort(ls->v, ls->n, sizeof(*ls->v), link_compare);
        for (size_t i = 0; i < ls->n; i++)
                if (ls->v[i]->is_fabric || ls->v[i]->want_down)
                        json_object_array_add(list, link_to_json(ls, ls->v[i]));
        return list;
}

void link_ports_clear(struct link_ports *ports)
{
        for (size_t i = 0; i < ports->n; i++)
                strv_free(ports->v[i].addresses);
        free(ports->v);
        *ports = (struct link_ports){ 0 };
}

static int link_port_fill(struct links *ls, const struct link *l, struct link_port *port)
{
        json_object *list = netlink_addresses(ls->nl, l->ifindex);
        int r = 0;

        snprintf(port->name, sizeof(port->name), "%s", l->name);
        port->mtu = l->seen.mtu;
        for (size_t k = 0; r == 0 && k < json_object_array_length(list); k++)
                r = strv_push(&port->addresses, json_object_get_string(json_object_array_get_idx(list, k)));
        json_object_put(list);
        return r;
}

int links_get_ports(struct links *ls, struct link_ports *ret)
{
        struct link_ports ports = { .v = calloc(ls->n + 1, sizeof(struct link_port)) };

        if (!ports.v)
                return -ENOMEM;
        if (ls->n > 1)
                qsort(ls->v, ls->n, sizeof(*ls->v), link_compare);
        for (size_t i = 0; i < ls->n; i++) {
                if (!ls->v[i]->is_fabric || ls->v[i]->want_down)
                        continue;
                if (link_port_fill(ls, ls->v[i], &ports.v[ports.n++]) < 0) {
                        link_ports_clear(&ports);
                        return -ENOMEM;
                }
        }
        *ret = ports;
        return 0;
}

void link_addresses_free(struct link_addresses *a)
{
        free(a->v);
        *a = (struct link_addresses){ 0 };
}

int links_addresses(struct links *ls, struct link_addresses *out)
{
        struct link_addresses a = { 0 };

        for (size_t i = 0; i < ls->n; i++) {
                json_object *list = netlink_addresses(ls->nl, ls->v[i]->ifindex);
                size_t n = json_object_array_length(list);
                struct link_address *v = n ? realloc(a.v, (a.n + n) * sizeof(*v)) : a.v;

                if (!v) {
                        json_object_put(list);
                        link_addresses_free(&a);
                        return -ENOMEM;
                }
                a.v = v;
                for (size_t k = 0; k < n; k++, a.n++) {
                        snprintf(v[a.n].ifname, sizeof(v[a.n].ifname), "%s", ls->v[i]->name);
                        snprintf(v[a.n].address, sizeof(v[a.n].address), "%s",
                                 json_object_get_string(json_object_array_get_idx(list, k)));
                }
                json_object_put(list);
        }
        *out = a;
        return 0;
}

int links_states(struct links *ls, struct link_states *out)
{
        struct link_state *v = calloc(ls->n + 1, sizeof(*v));
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        if (ls->n > 1)
                qsort(ls->v, ls->n, sizeof(*ls->v), link_compare);
        for (size_t i = 0; i < ls->n; i++) {
                const struct link *l = ls->v[i];

                if (!l->is_fabric && !l->want_down)
                        continue;
                snprintf(v[n].name, sizeof(v[n].name), "%s", l->name);
                v[n].oper_up = l->is_oper_up;
                v[n].mtu = l->seen.mtu;
                v[n].flaps = l->flaps;
                v[n].corrections = l->corrections;
                v[n++].flapping = l->flap.is_flapping;
        }
        *out = (struct link_states){ v, n };
        return 0;
}
