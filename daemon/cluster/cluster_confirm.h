/*
 * Which nodes of the cluster view another node vouches for, and the room a relay's word alone
 * gets. A node is confirmed when it is this node, an up peer, or listed as up with it by an up
 * peer other than the one its summary came through: a ring's far node by both its neighbours. A
 * node only its relay speaks of is unconfirmed; a relay brings at most CLUSTER_MAX_PER_RELAY
 * of them, and when the view is full an unconfirmed node gives way to a confirmed one. A peer
 * that invents nodes then fills at most that share of the view, and never displaces a node
 * another peer vouches for.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "cluster_internal.h"

#define CLUSTER_MAX_PER_RELAY (CLUSTER_MAX_NODES / 4)

/* Whether the node origin (held or not) is confirmed, its summary having come through relay. */
bool cluster_is_confirmed(struct cluster *c, const char *origin, const char *relay);
/* Room for a new node origin heard through relay: 0 when it may be added (an unconfirmed node
 * dropped to make room for a confirmed one when the view is full); -ENOSPC with why when not. */
int cluster_make_room(struct cluster *c, const char *origin, const char *relay, char *why, size_t size);
