/*
 * Which nodes of the cluster view another node vouches for, and the room a relay's word alone
 * gets. A node is confirmed when it is this node, an up peer, or listed as up with it by two up
 * peers, each in its own signed summary: a ring's far node by both its neighbours. A node fewer
 * speak of is unconfirmed; a relay brings at most CLUSTER_MAX_PER_RELAY
 * of them, and when the view is full an unconfirmed node gives way to a confirmed one. A peer
 * that invents nodes then fills at most that share of the view, and never displaces a node
 * another peer vouches for.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cluster_internal.h"

#define CLUSTER_MAX_PER_RELAY (CLUSTER_MAX_NODES / 4)

/* Whether the node origin (held or not) is confirmed. */
bool cluster_is_confirmed(struct cluster *c, const char *origin);
/* Whether the node held n counts (verdicts, the job plan, name clashes): this node, or one
 * confirmed now or at any time since it was first held. Its summaries are signed by its own key,
 * so once two peers vouched for it, what comes in its name is its own word;
 * a node that went silent still counts while it is remembered. */
bool cluster_node_counts(struct cluster *c, struct cluster_node *n);
/* Every node held judged again (after a summary came: it may vouch for others). */
void cluster_confirm_all(struct cluster *c);
/* Room for a new node origin heard through relay: 0 when it may be added (an unconfirmed node
 * dropped to make room for a confirmed one when the view is full); -ENOSPC with why when not. */
int cluster_make_room(struct cluster *c, const char *origin, const char *relay, char *why, size_t size);
