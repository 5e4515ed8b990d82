#include "cluster.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_internal.h"
#include "cluster_offer.h"
#include "common/json_get.h"
#include "common/json_raw.h"
#include "common/macro.h"
#include "daemon/base/log.h"
#include "daemon/base/node_id.h"
#include "summary.h"

static struct timeval timeval_of(uint64_t usec)
{
        return (struct timeval){ .tv_sec = (time_t)(usec / 1000000),
                                 .tv_usec = (suseconds_t)(usec % 1000000) };
}

uint64_t cluster_stale_usec(const struct cluster *c)
{
        return CLUSTER_STALE_REFRESHES * c->refresh_usec;
}

const char *cluster_self_id(const struct cluster *c)
{
        return c->self_id;
}

uint64_t cluster_refused(const struct cluster *c)
{
        return c->n_refused;
}

bool cluster_node_is_stale(const struct cluster *c, const struct cluster_node *n, int64_t now)
{
        return n->envelope && cluster_node_age_usec(n, now) > cluster_stale_usec(c);
}

int cluster_find_node(struct cluster *c, const char *what, char node_id[static 33])
{
        const struct cluster_node *found = NULL;
        size_t len = strlen(what);
        bool is_exact = false;

        for (size_t i = 0; i < c->nodes.n; i++)
                if (strcmp(c->nodes.v[i].name, what) == 0 || strcmp(c->nodes.v[i].node_id, what) == 0) {
                        found = &c->nodes.v[i];
                        is_exact = true;
                        break;
                }
        /* A prefix of at least 4 digits, as peers take it. */
        for (size_t i = 0; !is_exact && len >= 4 && i < c->nodes.n; i++)
                if (strncmp(c->nodes.v[i].node_id, what, len) == 0) {
                        if (found)
                                return -EADDRNOTAVAIL;
                        found = &c->nodes.v[i];
                }
        if (!found)
                return -ENOENT;
        snprintf(node_id, 33, "%s", found->node_id);
        return 0;
}

size_t cluster_peers_up(const struct cluster *c)
{
        return c->n_up;
}

bool cluster_is_peer_up(const struct cluster *c, const char *peer_id)
{
        return cluster_up_has(c, peer_id);
}

bool cluster_node_is_up_with(struct cluster *c, const char *a, const char *b)
{
        struct cluster_node *n = cluster_table_find(&c->nodes, a);

        return n && cluster_node_lists_peer(n, b);
}

bool cluster_is_designated_relay(struct cluster *c, const char *origin, const char *to)
{
        int64_t now = cluster_now_usec();
        const char *best = cluster_is_peer_up(c, origin) ? c->self_id : NULL;

        for (size_t i = 1; i < c->nodes.n; i++) {
                struct cluster_node *x = &c->nodes.v[i];

                if (!x->envelope || cluster_node_is_stale(c, x, now) || strcmp(x->node_id, to) == 0 ||
                    strcmp(x->node_id, origin) == 0 || (best && strcmp(x->node_id, best) >= 0))
                        continue;
                if (cluster_node_lists_peer(x, to) && cluster_node_lists_peer(x, origin))
                        best = x->node_id;
        }
        return !best || strcmp(best, c->self_id) == 0;
}

/* Whether the changes not sent yet may wait: those that may alone, soon after a send for
 * their kind; the least patient of them decides. */
static bool send_may_wait(struct cluster *c, int64_t now, int64_t *until)
{
        *until = INT64_MAX;
        if (!c->is_dirty_lazily)
                return false;
        if (c->is_lazy_pending)
                *until = c->lazy_sent_usec ? c->lazy_sent_usec + (int64_t)CLUSTER_LAZY_USEC : 0;
        if (c->is_paced_pending) {
                int64_t paced = c->paced_sent_usec ? c->paced_sent_usec + (int64_t)c->refresh_usec : 0;

                if (paced < *until)
                        *until = paced;
        }
        return now < *until;
}

/* The coalesce timer at the time the changes not sent yet are due, or sooner. */
static void arm_send(struct cluster *c)
{
        int64_t now = cluster_now_usec(), due = now + (int64_t)CLUSTER_COALESCE_USEC, until;
        struct timeval tv;

        if (!c->is_dirty || c->n_up == 0)
                return;
        if (send_may_wait(c, now, &until) && until > due)
                due = until;
        if (evtimer_pending(c->coalesce, NULL) && c->send_due_usec <= due)
                return;
        tv = timeval_of((uint64_t)(due - now));
        evtimer_add(c->coalesce, &tv);
        c->send_due_usec = due;
}

/* Whether a send now due is put off for the traffic budget: changes that may wait alone, not
 * waiting a minute yet, while the node is over its budget. */
static bool budget_defers(struct cluster *c, int64_t now)
{
        return c->is_dirty && c->is_dirty_lazily && c->transport.budget_defers &&
               now - c->dirty_since_usec < (int64_t)CLUSTER_BUDGET_MAX_WAIT_USEC &&
               c->transport.budget_defers(c->transport.userdata);
}

static void on_coalesce(evutil_socket_t fd, short what, void *userdata)
{
        struct cluster *c = userdata;
        struct timeval tv = timeval_of(CLUSTER_BUDGET_RECHECK_USEC);

        c->send_due_usec = 0;
        if (budget_defers(c, cluster_now_usec())) {
                evtimer_add(c->coalesce, &tv);
                c->send_due_usec = cluster_now_usec() + (int64_t)CLUSTER_BUDGET_RECHECK_USEC;
                return;
        }
        cluster_send_own(c);
}

static void arm_refresh(struct cluster *c)
{
        struct timeval tv = timeval_of(c->refresh_usec);

        if (c->n_up == 0 || c->refresh_usec == 0 || c->is_refresh_external) {
                evtimer_del(c->refresh);
                return;
        }
        evtimer_add(c->refresh, &tv);
}

void cluster_refresh(struct cluster *c)
{
        int64_t until;

        if (c->n_up == 0)
                return;
        if (c->refresh_hook)
                c->refresh_hook(c->refresh_hook_userdata);
        if (c->is_dirty && !send_may_wait(c, cluster_now_usec(), &until) &&
            !budget_defers(c, cluster_now_usec())) {
                evtimer_del(c->coalesce);
                cluster_send_own(c);
        } else {
                cluster_send_alives(c);
        }
}

static void on_refresh(evutil_socket_t fd, short what, void *userdata)
{
        cluster_refresh(userdata);
        arm_refresh(userdata);
}

/* The next time a held node goes stale or is to be forgotten. */
static void arm_deadline(struct cluster *c)
{
        int64_t now = cluster_now_usec(), next = INT64_MAX;

        for (size_t i = 0; i < c->nodes.n; i++) {
                const struct cluster_node *n = &c->nodes.v[i];
                int64_t at;

                if (!n->envelope)
                        continue;
                at = n->made_usec + (int64_t)(n->is_stale ? c->forget_after_usec : cluster_stale_usec(c)) +
                     1;
                if (at < next)
                        next = at;
        }
        if (next == INT64_MAX) {
                evtimer_del(c->deadline);
                return;
        }
        struct timeval tv = timeval_of(next > now ? (uint64_t)(next - now) : 0);
        evtimer_add(c->deadline, &tv);
}

static void on_deadline(evutil_socket_t fd, short what, void *userdata)
{
        struct cluster *c = userdata;
        int64_t now = cluster_now_usec();
        bool changed = false;

        for (size_t i = c->nodes.n; i-- > 0;) {
                struct cluster_node *n = &c->nodes.v[i];

                if (!n->envelope)
                        continue;
                if (cluster_node_age(n, now) > c->forget_after_usec) {
                        log_info("cluster: forgetting node %s (%s): nothing heard of it for %llu s", n->name,
                                 n->node_id, (unsigned long long)(cluster_node_age(n, now) / 1000000));
                        cluster_table_remove(&c->nodes, n);
                        changed = true;
                } else if (!n->is_stale && cluster_node_is_stale(c, n, now)) {
                        n->is_stale = true;
                        changed = true;
                }
        }
        if (changed)
                cluster_changed(c);
        else
                arm_deadline(c);
}

static void on_notify(evutil_socket_t fd, short what, void *userdata)
{
        struct cluster *c = userdata;

        for (size_t i = 0; i < ARRAY_SIZE(c->watchers); i++)
                if (c->watchers[i].fn)
                        c->watchers[i].fn(c->watchers[i].userdata);
}

void cluster_changed(struct cluster *c)
{
        struct timeval zero = { 0, 0 };

        c->generation++;
        /* The views' texts are of the last generation: no call can use them now (the links
         * view's only while it is younger than its lag), and at 32 nodes the links view is some
         * 300 KiB that would stay until the next call. */
        if (cluster_now_usec() - c->links_view.made_usec >= CLUSTER_LINKS_VIEW_LAG_USEC)
                json_object_put(TAKE_PTR(c->links_view.raw));
        json_object_put(TAKE_PTR(c->alerts_view.raw));
        /* No watcher, no wakeup. */
        if (c->watchers[0].fn && !evtimer_pending(c->notify, NULL))
                evtimer_add(c->notify, &zero);
        arm_deadline(c);
}

void cluster_deadline_moved(struct cluster *c)
{
        arm_deadline(c);
}

int cluster_watch(struct cluster *c, void (*fn)(void *userdata), void *userdata)
{
        for (size_t i = 0; i < ARRAY_SIZE(c->watchers); i++)
                if (!c->watchers[i].fn) {
                        c->watchers[i] = (struct cluster_watcher){ fn, userdata };
                        return 0;
                }
        return -ENOSPC;
}

enum section_pace {
        SECTION_AT_ONCE, /* within CLUSTER_COALESCE_USEC */
        SECTION_LAZY,    /* cluster_set_section_lazily */
        SECTION_PACED,   /* the section "peers": at most once a refresh interval alone */
};

static int set_section(struct cluster *c, const char *name, json_object *value, enum section_pace pace)
{
        struct cluster_node *self = cluster_self(c);
        json_object *old = NULL, *held = NULL;
        const char *text, *old_text;

        /* A name peers would refuse would cost this node's whole summary. */
        if (!summary_is_section_name(name)) {
                json_object_put(value);
                return -EINVAL;
        }
        json_object_object_get_ex(self->sections, name, &old);
        /* Held as its text, as a peer's are: the summary writes it as it is, the few readers of one
         * section parse it back (cluster_get_section), and its tree is freed now rather than kept
         * at five to ten times the size. */
        text = value ? json_object_to_json_string_ext(value, JSON_C_TO_STRING_PLAIN) : NULL;
        old_text = json_raw_text(old);
        if ((!old && !value) || (text && old_text && strcmp(old_text, text) == 0)) {
                json_object_put(value);
                return 0;
        }
        if (value) {
                held = text ? json_raw_new(text) : NULL;
                json_object_put(value);
                if (!held)
                        return -ENOMEM;
                json_object_object_add(self->sections, name, held);
        } else {
                json_object_object_del(self->sections, name);
        }
        if (!c->is_dirty)
                c->dirty_since_usec = cluster_now_usec();
        c->is_dirty_lazily = pace != SECTION_AT_ONCE && (!c->is_dirty || c->is_dirty_lazily);
        c->is_lazy_pending |= pace == SECTION_LAZY;
        c->is_paced_pending |= pace == SECTION_PACED;
        c->is_dirty = true;
        cluster_changed(c);
        arm_send(c);
        return 0;
}

int cluster_set_section(struct cluster *c, const char *name, json_object *value)
{
        return set_section(c, name, value, SECTION_AT_ONCE);
}

int cluster_set_section_lazily(struct cluster *c, const char *name, json_object *value)
{
        return set_section(c, name, value, SECTION_LAZY);
}

json_object *cluster_get_section(struct cluster *c, const char *node_id, const char *name,
                                 uint64_t *age_usec, bool *is_stale)
{
        struct cluster_node *n = cluster_table_find(&c->nodes, node_id);
        int64_t now = cluster_now_usec();
        json_object *v = NULL;

        if (!n || !json_object_object_get_ex(n->sections, name, &v))
                return NULL;
        if (age_usec)
                *age_usec = cluster_node_age(n, now);
        if (is_stale)
                *is_stale = cluster_node_is_stale(c, n, now);
        /* Every node's sections, this one's too, are held as their text. */
        return json_raw_parsed(v);
}

int cluster_section_text(struct cluster *c, const char *node_id, const char *name,
                         void (*fn)(const char *text, size_t len, void *userdata), void *userdata)
{
        struct cluster_node *n = cluster_table_find(&c->nodes, node_id);
        json_object *v = NULL;
        const char *text;

        if (!n || !json_object_object_get_ex(n->sections, name, &v))
                return -ENOENT;
        text = json_raw_text(v);
        if (!text)
                return json_plain_text_with(v, fn, userdata);
        fn(text, strlen(text), userdata);
        return 0;
}

/* The section "peers": the ids this node is up with, sorted, so others relay only where needed. */
static void set_peers_section(struct cluster *c)
{
        json_object *ids = json_object_new_array();
        char(*sorted)[33] = NULL;

        if (c->n_up) {
                sorted = malloc(c->n_up * sizeof(*sorted));
                if (!sorted) {
                        json_object_put(ids);
                        return;
                }
                memcpy(sorted, c->up, c->n_up * sizeof(*sorted));
                qsort(sorted, c->n_up, sizeof(*sorted), (int (*)(const void *, const void *))strcmp);
        }
        for (size_t i = 0; i < c->n_up; i++)
                json_object_array_add(ids, json_object_new_string(sorted[i]));
        free(sorted);
        /* While a mesh forms, a node's peers change many times a second; each change sent at
         * once was the whole summary to every up peer five times a second. Once a refresh
         * interval is soon enough for the relays and the vouching that read it. */
        (void)set_section(c, "peers", ids, SECTION_PACED);
}

void cluster_peer_up(struct cluster *c, const char *peer_id)
{
        if (!cluster_is_peer_up(c, peer_id)) {
                char(*up)[33] = realloc(c->up, (c->n_up + 1) * sizeof(*up));

                if (!up)
                        return;
                c->up = up;
                snprintf(c->up[c->n_up++], sizeof(*up), "%s", peer_id);
        }
        /* This node's summary as the other peers hold it (what changed since goes to all with the
         * next send), then an offer of whatever is held, stale ones too: the new peer asks for
         * the nodes it cannot reach (cluster_offer.h). */
        if (c->refresh_hook)
                c->refresh_hook(c->refresh_hook_userdata);
        (void)cluster_send_node(c, peer_id, cluster_self(c));
        (void)cluster_offer_held(c, peer_id);
        if (!evtimer_pending(c->refresh, NULL))
                arm_refresh(c);
        set_peers_section(c);
        /* The other peers have not had what changed yet. */
        arm_send(c);
}

void cluster_peer_down(struct cluster *c, const char *peer_id)
{
        for (size_t i = 0; i < c->n_up; i++)
                if (strcmp(c->up[i], peer_id) == 0) {
                        memmove(&c->up[i], &c->up[i + 1], (c->n_up - i - 1) * sizeof(*c->up));
                        c->n_up--;
                        break;
                }
        set_peers_section(c);
        if (c->n_up == 0) {
                evtimer_del(c->refresh);
                evtimer_del(c->coalesce);
                fanout_cancel(c->fanout);
        }
}

void cluster_set_refresh_external(struct cluster *c, bool is_external)
{
        c->is_refresh_external = is_external;
        arm_refresh(c);
}

void cluster_set_refresh_hook(struct cluster *c, void (*fn)(void *userdata), void *userdata)
{
        c->refresh_hook = fn;
        c->refresh_hook_userdata = userdata;
}

void cluster_configure(struct cluster *c, const char *name, uint64_t refresh_usec,
                       uint64_t forget_after_usec)
{
        struct cluster_node *self = cluster_self(c);
        bool renamed = strcmp(self->name, name) != 0;

        snprintf(self->name, sizeof(self->name), "%s", name);
        c->forget_after_usec = forget_after_usec;
        if (c->refresh_usec != refresh_usec) {
                c->refresh_usec = refresh_usec;
                arm_refresh(c);
        }
        if (renamed) {
                cluster_changed(c);
                cluster_send_own(c);
        } else if (c->nodes.n > 1) {
                arm_deadline(c);
        }
}

int cluster_new(struct event_base *base, const char *node_id, const char *name,
                const struct cluster_transport *transport, struct cluster **ret)
{
        struct cluster *c = calloc(1, sizeof(*c));
        struct cluster_node *self;
        int r;

        if (!c)
                return -ENOMEM;
        c->base = base;
        c->transport = *transport;
        c->started_usec = cluster_now_usec();
        c->forget_after_usec = CLUSTER_FORGET_DEFAULT_USEC;
        snprintf(c->self_id, sizeof(c->self_id), "%s", node_id);
        r = node_id_random(c->instance);
        if (r < 0)
                goto fail;
        self = cluster_table_add(&c->nodes, node_id);
        if (!self) {
                r = -ENOMEM;
                goto fail;
        }
        snprintf(self->name, sizeof(self->name), "%s", name);
        snprintf(self->instance, sizeof(self->instance), "%s", c->instance);
        self->sections = json_object_new_object();
        c->coalesce = evtimer_new(base, on_coalesce, c);
        c->refresh = evtimer_new(base, on_refresh, c);
        c->deadline = evtimer_new(base, on_deadline, c);
        c->notify = evtimer_new(base, on_notify, c);
        if (!self->sections || !c->coalesce || !c->refresh || !c->deadline || !c->notify) {
                r = -ENOMEM;
                goto fail;
        }
        r = fanout_new(base, c->transport.send, c->transport.userdata, &c->fanout);
        if (r < 0)
                goto fail;
        *ret = c;
        return 0;
fail:
        cluster_free(c);
        return r;
}

void cluster_set_node_key(struct cluster *c, EVP_PKEY *key)
{
        c->node_key = key;
}

void cluster_free(struct cluster *c)
{
        if (!c)
                return;
        struct event *timers[] = { c->coalesce, c->refresh, c->deadline, c->notify };

        for (size_t i = 0; i < sizeof(timers) / sizeof(timers[0]); i++)
                if (timers[i])
                        event_free(timers[i]);
        fanout_free(c->fanout);
        cluster_table_clear(&c->nodes);
        free(c->up);
        json_object_put(c->links_view.raw);
        json_object_put(c->alerts_view.raw);
        json_object_put(c->sent_digests);
        json_object_put(c->fanout_base);
        json_object_put(c->last_full);
        free(c);
}
