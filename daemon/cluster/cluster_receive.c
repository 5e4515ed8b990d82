/* Summaries from peers: refused when not to be believed, kept when newer, passed on. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cluster_internal.h"
#include "daemon/base/log.h"
#include "summary.h"

#define REFUSAL_LOG_INTERVAL_USEC (60 * 1000000LL)

/* Whether a refusal from peer_id is to be logged now: once a minute per peer, the slot of the
 * peer logged longest ago reused for a new one. */
static bool refusal_is_logged(struct cluster *c, const char *peer_id, int64_t now)
{
        struct cluster_refusal_log *slot = &c->refusals[0];

        for (size_t i = 0; i < CLUSTER_REFUSAL_LOG_SLOTS; i++) {
                struct cluster_refusal_log *l = &c->refusals[i];

                if (strcmp(l->peer_id, peer_id) == 0) {
                        slot = l;
                        break;
                }
                if (l->logged_usec < slot->logged_usec)
                        slot = l;
        }
        if (strcmp(slot->peer_id, peer_id) == 0 && slot->logged_usec &&
            now - slot->logged_usec < REFUSAL_LOG_INTERVAL_USEC)
                return false;
        snprintf(slot->peer_id, sizeof(slot->peer_id), "%s", peer_id);
        slot->logged_usec = now;
        return true;
}

static int refuse(struct cluster *c, const char *peer_id, int error, const char *why)
{
        char name[64];

        c->n_refused++;
        if (!refusal_is_logged(c, peer_id, cluster_now_usec()))
                return error;
        if (c->transport.hello_name(c->transport.userdata, peer_id, name, sizeof(name)) < 0)
                snprintf(name, sizeof(name), "?");
        log_warning("cluster: refused a summary from peer %s (%s): %s; further refusals from it are "
                    "not logged for 60 s",
                    name, peer_id, why);
        return error;
}

/* Whether s is newer than what n holds: the same instance with a higher sequence, or another
 * instance (the origin restarted) made more recently. */
static bool is_newer(const struct cluster_node *n, const struct summary *s, int64_t made)
{
        if (strcmp(n->instance, s->instance) == 0)
                return s->seq > n->seq;
        return made > n->made_usec;
}

static void relay(struct cluster *c, const char *from, struct cluster_node *n)
{
        for (size_t i = 0; i < c->n_up; i++)
                if (strcmp(c->up[i], from) != 0 && strcmp(c->up[i], n->node_id) != 0)
                        (void)cluster_send_node(c, c->up[i], n);
}

int cluster_receive(struct cluster *c, const char *peer_id, json_object *msg)
{
        int64_t now = cluster_now_usec(), made;
        struct cluster_node *n;
        struct summary s;
        char why[256], hello[64];
        bool is_changed;
        int r;

        r = summary_check(msg, &s, why, sizeof(why));
        if (r < 0)
                return refuse(c, peer_id, r, why);
        if (strcmp(s.origin, c->self_id) == 0)
                return refuse(c, peer_id, -EPERM, "it claims this node's id");
        if (strcmp(s.origin, peer_id) == 0) {
                if (c->transport.hello_name(c->transport.userdata, peer_id, hello, sizeof(hello)) < 0)
                        return refuse(c, peer_id, -EPERM, "its sender's hello is not known");
                if (strcmp(hello, s.name) != 0) {
                        snprintf(why, sizeof(why), "it names its sender \"%s\", whose hello said \"%s\"",
                                 s.name, hello);
                        return refuse(c, peer_id, -EPERM, why);
                }
        }
        made = now - (int64_t)s.age_ms * 1000;
        if (s.age_ms * 1000 > c->forget_after_usec)
                return 0; /* older than what is kept: nothing to show, nothing to pass on */
        n = cluster_table_find(&c->nodes, s.origin);
        if (n && !is_newer(n, &s, made))
                return 0;
        if (!n) {
                if (c->nodes.n >= CLUSTER_MAX_NODES) {
                        snprintf(why, sizeof(why), "it names a new node %s past the limit of %d nodes kept",
                                 s.origin, CLUSTER_MAX_NODES);
                        return refuse(c, peer_id, -ENOSPC, why);
                }
                n = cluster_table_add(&c->nodes, s.origin);
                if (!n)
                        return -ENOMEM;
                log_info("cluster: heard of node %s (%s) through peer %s", s.name, s.origin, peer_id);
        }
        is_changed = !n->msg || !json_object_equal(n->sections, s.sections) ||
                     strcmp(n->name, s.name) != 0 || n->is_stale;
        if (n->msg)
                json_object_put(n->msg);
        n->msg = json_object_get(msg);
        n->sections = s.sections;
        snprintf(n->name, sizeof(n->name), "%s", s.name);
        snprintf(n->instance, sizeof(n->instance), "%s", s.instance);
        snprintf(n->via, sizeof(n->via), "%s", peer_id);
        n->seq = s.seq;
        n->format = s.format;
        n->uptime_ms = s.uptime_ms;
        n->made_usec = made;
        n->is_stale = cluster_node_is_stale(c, n, now);
        if (is_changed)
                cluster_changed(c);
        relay(c, peer_id, n);
        return 0;
}
