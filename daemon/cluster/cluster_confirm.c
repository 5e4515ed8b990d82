#include "cluster_confirm.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/base/log.h"

/* Two up peers, each in its own signed summary: one keyed peer vouching alone could confirm
 * nodes it made up and sent through an honest relay. A ring of four's far node is listed by both
 * its neighbours, which are this node's; a node every other node of a switch is up with, by many. */
#define CLUSTER_CONFIRM_VOUCHERS 2

bool cluster_is_confirmed(struct cluster *c, const char *origin)
{
        unsigned vouchers = 0;

        if (strcmp(origin, c->self_id) == 0 || cluster_is_peer_up(c, origin))
                return true;
        for (size_t i = 0; i < c->n_up && vouchers < CLUSTER_CONFIRM_VOUCHERS; i++)
                if (cluster_node_is_up_with(c, c->up[i], origin))
                        vouchers++;
        return vouchers >= CLUSTER_CONFIRM_VOUCHERS;
}

bool cluster_node_counts(struct cluster *c, struct cluster_node *n)
{
        if (!n->envelope || n->was_confirmed)
                return true;
        n->was_confirmed = cluster_is_confirmed(c, n->node_id);
        return n->was_confirmed;
}

void cluster_confirm_all(struct cluster *c)
{
        for (size_t i = 1; i < c->nodes.n; i++)
                (void)cluster_node_counts(c, &c->nodes.v[i]);
}

/* The unconfirmed nodes held that came through relay. */
static size_t count_brought_by(struct cluster *c, const char *relay)
{
        size_t n = 0;

        for (size_t i = 1; i < c->nodes.n; i++) {
                struct cluster_node *node = &c->nodes.v[i];

                if (strcmp(node->via, relay) == 0 && !cluster_node_counts(c, node))
                        n++;
        }
        return n;
}

/* The unconfirmed node heard from longest ago; NULL when every node held is confirmed. */
static struct cluster_node *oldest_unconfirmed(struct cluster *c)
{
        struct cluster_node *oldest = NULL;

        for (size_t i = 1; i < c->nodes.n; i++) {
                struct cluster_node *node = &c->nodes.v[i];

                if (!cluster_node_counts(c, node) && (!oldest || node->made_usec < oldest->made_usec))
                        oldest = node;
        }
        return oldest;
}

int cluster_make_room(struct cluster *c, const char *origin, const char *relay, char *why, size_t size)
{
        bool is_confirmed = cluster_is_confirmed(c, origin);
        struct cluster_node *victim;
        size_t brought;

        if (!is_confirmed && (brought = count_brought_by(c, relay)) >= CLUSTER_MAX_PER_RELAY) {
                snprintf(why, size,
                         "it names a new node %s that no other peer confirms, and %zu such nodes came "
                         "through it (at most %d a peer)",
                         origin, brought, CLUSTER_MAX_PER_RELAY);
                return -ENOSPC;
        }
        if (c->nodes.n < CLUSTER_MAX_NODES)
                return 0;
        victim = is_confirmed ? oldest_unconfirmed(c) : NULL;
        if (!victim) {
                snprintf(why, size, "it names a new node %s past the limit of %d nodes kept%s", origin,
                         CLUSTER_MAX_NODES,
                         is_confirmed ? ", all confirmed by peers" : ", and no other peer confirms it");
                return -ENOSPC;
        }
        log_notice("cluster: dropped node %s (%s), which only peer %s spoke of, for node %s, which a peer "
                   "confirms: the view holds at most %d nodes",
                   victim->name, victim->node_id, victim->via, origin, CLUSTER_MAX_NODES);
        cluster_table_remove(&c->nodes, victim);
        cluster_changed(c);
        return 0;
}
