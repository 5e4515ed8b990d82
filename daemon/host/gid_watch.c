#include "gid_watch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"

/* The kernel rebuilds a GID table in a work queue after the netdev event: a re-read this long
 * after the last link or address change sees the settled table, and a burst costs one read. */
#define SETTLE_USEC 500000

struct gid_watch {
        struct event_base *base;
        gid_read_fn read;
        void *userdata;
        struct gid_table table;
        bool has_table;
        struct event *settle;
        unsigned changes;      /* gid-changed events since start */
        uint64_t generation;   /* moves with every read of the tables and every env served */
        time_t env_changed_at; /* 0: no change since the env was last served */
        bool env_served;       /* the env method has answered since start */
        char env_changed_reason[512];
};

int gid_table_build(const struct rdma_inventory *inv, gid_ipv4_fn ipv4_of, void *userdata,
                    struct gid_table *out)
{
        size_t n = 0;

        *out = (struct gid_table){ 0 };
        for (size_t i = 0; i < inv->n; i++)
                n += inv->v[i].n_ports;
        out->v = calloc(n + 1, sizeof(*out->v));
        if (!out->v)
                return -ENOMEM;
        for (size_t i = 0; i < inv->n; i++) {
                const struct rdma_device *d = &inv->v[i];

                for (size_t k = 0; k < d->n_ports; k++) {
                        const struct rdma_port *p = &d->ports[k];
                        struct gid_entry *e = &out->v[out->n];

                        /* InfiniBand ports name no GID by address, netdev-less ones have none. */
                        if (strcmp(p->link_layer, "Ethernet") != 0 || !p->netdev[0])
                                continue;
                        *e = (struct gid_entry){ .port = p->num, .index = -1 };
                        snprintf(e->device, sizeof(e->device), "%s", d->name);
                        snprintf(e->netdev, sizeof(e->netdev), "%s", p->netdev);
                        if (!ipv4_of(p->netdev, e->ipv4, sizeof(e->ipv4), userdata))
                                e->ipv4[0] = '\0';
                        e->index = rdma_port_gid_for_ipv4(p, e->ipv4);
                        out->n++;
                }
        }
        return 0;
}

void gid_table_free(struct gid_table *t)
{
        free(t->v);
        *t = (struct gid_table){ 0 };
}

static const struct gid_entry *table_find(const struct gid_table *t, const char *device, unsigned port)
{
        for (size_t i = 0; i < t->n; i++)
                if (t->v[i].port == port && strcmp(t->v[i].device, device) == 0)
                        return &t->v[i];
        return NULL;
}

static bool entries_differ(const struct gid_entry *a, const struct gid_entry *b)
{
        return a->index != b->index || strcmp(a->ipv4, b->ipv4) != 0 || strcmp(a->netdev, b->netdev) != 0;
}

/* The side of a port that is not there: same device and port, no netdev, no address, no GID. */
static struct gid_entry absent(const struct gid_entry *other)
{
        struct gid_entry e = { .port = other->port, .index = -1 };

        snprintf(e.device, sizeof(e.device), "%s", other->device);
        return e;
}

int gid_table_compare(const struct gid_table *old, const struct gid_table *new, struct gid_change **changes,
                      size_t *n_changes)
{
        struct gid_change *v = calloc(old->n + new->n + 1, sizeof(*v));
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < new->n; i++) {
                const struct gid_entry *o = table_find(old, new->v[i].device, new->v[i].port);
                struct gid_entry before = o ? *o : absent(&new->v[i]);

                if (!entries_differ(&before, &new->v[i]))
                        continue;
                /* A port that came without an address or a GID changes nothing a job relies on. */
                if (!o && new->v[i].index < 0 && !new->v[i].ipv4[0])
                        continue;
                v[n++] = (struct gid_change){ .old = before, .new = new->v[i] };
        }
        for (size_t i = 0; i < old->n; i++) {
                if (table_find(new, old->v[i].device, old->v[i].port))
                        continue;
                if (old->v[i].index < 0 && !old->v[i].ipv4[0])
                        continue;
                v[n++] = (struct gid_change){ .old = old->v[i], .new = absent(&old->v[i]) };
        }
        *changes = v;
        *n_changes = n;
        return 0;
}

static const char *or_none(const char *s)
{
        return s[0] ? s : "none";
}

void gid_change_describe(const struct gid_change *c, char *buf, size_t size)
{
        const struct gid_entry *o = &c->old, *n = &c->new;
        const char *netdev = n->netdev[0] ? n->netdev : o->netdev;
        char from[48], to[48];

        snprintf(from, sizeof(from), o->index >= 0 ? "GID %d" : "no GID", o->index);
        snprintf(to, sizeof(to), n->index >= 0 ? "GID %d" : "no GID", n->index);
        if (strcmp(o->ipv4, n->ipv4) == 0)
                snprintf(buf, size, "%s port %u (%s): %s moved from %s to %s", n->device, n->port,
                         or_none(netdev), or_none(n->ipv4), from, to);
        else
                snprintf(buf, size, "%s port %u (%s): address %s (%s) is now %s (%s)", n->device, n->port,
                         or_none(netdev), or_none(o->ipv4), from, or_none(n->ipv4), to);
}

static void emit_change(struct gid_watch *w, const struct gid_change *c)
{
        char port[16], old_index[16], new_index[16], message[256];
        const char *netdev = c->new.netdev[0] ? c->new.netdev : c->old.netdev;
        struct log_field f[] = {
                { "iface", netdev },
                { "device", c->new.device },
                { "port", port },
                { "old_index", old_index },
                { "new_index", new_index },
                { "old_address", c->old.ipv4 },
                { "new_address", c->new.ipv4 },
        };

        snprintf(port, sizeof(port), "%u", c->new.port);
        snprintf(old_index, sizeof(old_index), "%d", c->old.index);
        snprintf(new_index, sizeof(new_index), "%d", c->new.index);
        gid_change_describe(c, message, sizeof(message));
        event_emit(EVENT_GID_CHANGED, f, ARRAY_SIZE(f),
                   "GID table changed: %s; NCCL jobs started before may fail (`sparkc env` again)", message);
        w->changes++;
        w->env_changed_at = time(NULL);
        snprintf(w->env_changed_reason, sizeof(w->env_changed_reason), "%s", message);
}

void gid_watch_check(struct gid_watch *w)
{
        _cleanup_free_ struct gid_change *changes = NULL;
        struct gid_table now;
        size_t n = 0;
        int r;

        /* This read sees every change so far: a settle read pending for them would repeat it. */
        evtimer_del(w->settle);
        r = w->read(w->userdata, &now);
        if (r < 0) {
                log_warning("gid watch: cannot read the GID tables: %s", strerror(-r));
                return;
        }
        if (w->has_table) {
                r = gid_table_compare(&w->table, &now, &changes, &n);
                if (r < 0) {
                        log_warning("gid watch: cannot compare the GID tables: %s", strerror(-r));
                        gid_table_free(&now);
                        return;
                }
                for (size_t i = 0; i < n; i++)
                        emit_change(w, &changes[i]);
        }
        gid_table_free(&w->table);
        w->table = now;
        w->has_table = true;
        w->generation++;
}

static void on_timer(evutil_socket_t fd, short what, void *userdata)
{
        gid_watch_check(userdata);
}

int gid_watch_new(struct event_base *base, gid_read_fn read, void *userdata, struct gid_watch **ret)
{
        struct gid_watch *w = calloc(1, sizeof(*w));

        if (!w)
                return -ENOMEM;
        *w = (struct gid_watch){ .base = base, .read = read, .userdata = userdata };
        w->settle = evtimer_new(base, on_timer, w);
        if (!w->settle) {
                gid_watch_free(w);
                return -ENOMEM;
        }
        *ret = w;
        return 0;
}

void gid_watch_free(struct gid_watch *w)
{
        if (!w)
                return;
        if (w->settle)
                event_free(w->settle);
        gid_table_free(&w->table);
        free(w);
}

void gid_watch_poke(struct gid_watch *w)
{
        struct timeval tv = { .tv_sec = 0, .tv_usec = SETTLE_USEC };

        /* Re-armed by every change: a burst is read once, after its last change. */
        evtimer_add(w->settle, &tv);
}

void gid_watch_env_served(struct gid_watch *w)
{
        w->env_served = true;
        w->env_changed_at = 0;
        w->env_changed_reason[0] = '\0';
        w->generation++;
}

uint64_t gid_watch_generation(const struct gid_watch *w)
{
        return w->generation;
}

unsigned gid_watch_changes(const struct gid_watch *w)
{
        return w->changes;
}

bool gid_watch_env_stale(const struct gid_watch *w)
{
        return w->env_served && w->env_changed_at;
}

json_object *gid_watch_to_json(const struct gid_watch *w)
{
        json_object *o = json_object_new_object(), *ports = json_object_new_array();

        if (w->env_changed_at) {
                char when[64];
                struct tm tm;

                gmtime_r(&w->env_changed_at, &tm);
                strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
                json_object_object_add(o, "env_changed_at", json_object_new_string(when));
                json_object_object_add(o, "env_changed_reason",
                                       json_object_new_string(w->env_changed_reason));
        } else {
                json_object_object_add(o, "env_changed_at", NULL);
                json_object_object_add(o, "env_changed_reason", NULL);
        }
        json_object_object_add(o, "gid_changes", json_object_new_int((int)w->changes));
        for (size_t i = 0; i < w->table.n; i++) {
                const struct gid_entry *e = &w->table.v[i];
                json_object *p = json_object_new_object();

                json_object_object_add(p, "device", json_object_new_string(e->device));
                json_object_object_add(p, "port", json_object_new_int((int)e->port));
                json_object_object_add(p, "netdev", json_object_new_string(e->netdev));
                json_object_object_add(p, "ipv4", e->ipv4[0] ? json_object_new_string(e->ipv4) : NULL);
                json_object_object_add(p, "gid_index", e->index >= 0 ? json_object_new_int(e->index) : NULL);
                json_object_array_add(ports, p);
        }
        json_object_object_add(o, "ports", ports);
        return o;
}
