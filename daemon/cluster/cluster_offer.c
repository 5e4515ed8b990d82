#include "cluster_offer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cluster_internal.h"
#include "summary.h"

/* [origin, instance, seq, age_ms]: n as held now. */
static json_object *offer_entry(const struct cluster_node *n, int64_t now)
{
        json_object *e = json_object_new_array_ext(4);
        json_object *v[4] = { json_object_new_string(n->node_id), json_object_new_string(n->instance),
                              json_object_new_int64((int64_t)n->seq),
                              json_object_new_int64((int64_t)(cluster_node_age(n, now) / 1000)) };

        for (size_t i = 0; i < 4; i++)
                if (!e || !v[i]) {
                        for (size_t k = 0; k < 4; k++)
                                json_object_put(v[k]);
                        json_object_put(e);
                        return NULL;
                }
        for (size_t i = 0; i < 4; i++)
                json_object_array_add(e, v[i]);
        return e;
}

static json_object *offer_new(void)
{
        json_object *m = json_object_new_object(), *type = json_object_new_string(CLUSTER_OFFER_TYPE);
        json_object *nodes = json_object_new_array();

        if (!m || !type || !nodes) {
                json_object_put(m);
                json_object_put(type);
                json_object_put(nodes);
                return NULL;
        }
        json_object_object_add(m, "type", type);
        json_object_object_add(m, "nodes", nodes);
        return m;
}

static int offer_send(struct cluster *c, const char *peer_id, json_object *m)
{
        if (json_object_array_length(json_object_object_get(m, "nodes")) == 0) {
                json_object_put(m);
                return 0;
        }
        return c->transport.send(c->transport.userdata, peer_id, m);
}

int cluster_offer_held(struct cluster *c, const char *peer_id)
{
        int64_t now = cluster_now_usec();
        json_object *m = offer_new(), *nodes;

        if (!m)
                return -ENOMEM;
        nodes = json_object_object_get(m, "nodes");
        for (size_t i = 0; i < c->nodes.n; i++) {
                const struct cluster_node *n = &c->nodes.v[i];

                /* This node's own summary goes to the peer itself, first hand. */
                json_object *e;

                if (!n->envelope || strcmp(n->node_id, peer_id) == 0)
                        continue;
                e = offer_entry(n, now);
                if (!e) {
                        json_object_put(m);
                        return -ENOMEM;
                }
                json_object_array_add(nodes, e);
        }
        return offer_send(c, peer_id, m);
}

int cluster_offer_node(struct cluster *c, const char *peer_id, const struct cluster_node *n)
{
        json_object *m = offer_new(), *e = m ? offer_entry(n, cluster_now_usec()) : NULL;

        if (!e) {
                json_object_put(m);
                return -ENOMEM;
        }
        json_object_array_add(json_object_object_get(m, "nodes"), e);
        return offer_send(c, peer_id, m);
}

/* The slot of origin's want of peer_id, else the one asked longest ago (a slot of 0 is free). */
static struct cluster_want *want_slot(struct cluster *c, const char *peer_id, const char *origin)
{
        struct cluster_want *oldest = &c->wants[0];

        for (size_t i = 0; i < CLUSTER_WANTS_IN_FLIGHT; i++) {
                if (strcmp(c->wants[i].origin, origin) == 0 && strcmp(c->wants[i].peer_id, peer_id) == 0)
                        return &c->wants[i];
                if (c->wants[i].asked_usec < oldest->asked_usec)
                        oldest = &c->wants[i];
        }
        return oldest;
}

int cluster_want_from(struct cluster *c, const char *peer_id, const char *origin)
{
        int64_t now = cluster_now_usec();
        struct cluster_want *w = want_slot(c, peer_id, origin);
        json_object *want;

        if (strcmp(w->origin, origin) == 0 && strcmp(w->peer_id, peer_id) == 0 && w->asked_usec &&
            now - w->asked_usec < (int64_t)c->refresh_usec)
                return 0;
        want = json_object_new_object();
        if (!want)
                return -ENOMEM;
        json_object_object_add(want, "type", json_object_new_string(SUMMARY_WANT_TYPE));
        json_object_object_add(want, "origin", json_object_new_string(origin));
        snprintf(w->origin, sizeof(w->origin), "%s", origin);
        snprintf(w->peer_id, sizeof(w->peer_id), "%s", peer_id);
        w->asked_usec = now;
        c->n_wants_sent++;
        return c->transport.send(c->transport.userdata, peer_id, want) < 0 ? -ENOTCONN : 1;
}

void cluster_want_answered(struct cluster *c, const char *origin)
{
        for (size_t i = 0; i < CLUSTER_WANTS_IN_FLIGHT; i++)
                if (strcmp(c->wants[i].origin, origin) == 0)
                        c->wants[i] = (struct cluster_want){ 0 };
}

/* One entry read: 0 with its fields, -EBADMSG when it is not [id, id, seq >= 1, age_ms]. */
static int read_entry(json_object *e, const char **origin, const char **instance, uint64_t *seq,
                      uint64_t *age_ms)
{
        json_object *v[4];

        if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 4)
                return -EBADMSG;
        for (size_t i = 0; i < 4; i++)
                v[i] = json_object_array_get_idx(e, i);
        if (!json_object_is_type(v[0], json_type_string) || !json_object_is_type(v[1], json_type_string) ||
            !json_object_is_type(v[2], json_type_int) || !json_object_is_type(v[3], json_type_int))
                return -EBADMSG;
        *origin = json_object_get_string(v[0]);
        *instance = json_object_get_string(v[1]);
        if (!summary_is_id(*origin) || !summary_is_id(*instance) || json_object_get_int64(v[2]) < 1 ||
            json_object_get_int64(v[3]) < 0 || (uint64_t)json_object_get_int64(v[3]) > SUMMARY_MAX_AGE_MS)
                return -EBADMSG;
        *seq = (uint64_t)json_object_get_int64(v[2]);
        *age_ms = (uint64_t)json_object_get_int64(v[3]);
        return 0;
}

/* Whether what an entry names is worth asking peer_id for: not this node, not the peer (which
 * sends its own), not a node heard first hand, not older than what is kept or held. */
static bool is_wanted(struct cluster *c, const char *peer_id, const char *origin, const char *instance,
                      uint64_t seq, uint64_t age_ms, int64_t now)
{
        struct cluster_node *n;

        if (strcmp(origin, c->self_id) == 0 || strcmp(origin, peer_id) == 0 || cluster_up_has(c, origin))
                return false;
        if (age_ms * 1000 > c->forget_after_usec)
                return false;
        n = cluster_table_find(&c->nodes, origin);
        if (!n || !n->envelope)
                return true;
        if (strcmp(n->instance, instance) == 0)
                return seq > n->seq;
        return now - (int64_t)age_ms * 1000 > n->made_usec;
}

int cluster_receive_offer(struct cluster *c, const char *peer_id, json_object *msg)
{
        int64_t now = cluster_now_usec();
        json_object *nodes = NULL;
        size_t len;

        if (!json_object_object_get_ex(msg, "nodes", &nodes) || !json_object_is_type(nodes, json_type_array))
                return -EBADMSG;
        len = json_object_array_length(nodes);
        if (len > CLUSTER_MAX_NODES)
                return -EBADMSG;
        /* Checked whole before anything is asked: a bad entry refuses the offer. */
        for (size_t i = 0; i < len; i++) {
                const char *origin, *instance;
                uint64_t seq, age_ms;

                if (read_entry(json_object_array_get_idx(nodes, i), &origin, &instance, &seq, &age_ms) < 0)
                        return -EBADMSG;
        }
        for (size_t i = 0; i < len; i++) {
                const char *origin, *instance;
                uint64_t seq, age_ms;

                (void)read_entry(json_object_array_get_idx(nodes, i), &origin, &instance, &seq, &age_ms);
                if (is_wanted(c, peer_id, origin, instance, seq, age_ms, now) &&
                    cluster_want_from(c, peer_id, origin) < 0)
                        break;
        }
        return 0;
}
