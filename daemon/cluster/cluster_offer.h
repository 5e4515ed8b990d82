/*
 * Offers and wants: how a summary that is not first hand reaches a node. A peer that comes up is
 * offered what this node holds (origin, instance, sequence, age: some 90 bytes a node), and a
 * summary kept from a peer is offered, not sent, to the up peers that do not hear its origin;
 * each asks (a want) for what it lacks, once per origin and peer until the answer comes or a refresh
 * interval passes. A summary of N sections then crosses each link at most once per change and
 * only to a node that needs it: pushed whole, a 64-node mesh still forming sent each new peer all
 * 63 summaries held and relayed every change to every peer not yet known to hear its origin,
 * some 120 MB a minute from one node, on cores the handshakes of the mesh were waiting for.
 * An offer is not signed: what it names is only asked for, and what comes is checked as any
 * summary is.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "cluster_table.h"

struct cluster;

#define CLUSTER_OFFER_TYPE "cluster-offer"

/* Offers peer_id every node held but itself and peer_id: what a peer that comes up is given. */
int cluster_offer_held(struct cluster *c, const char *peer_id);
/* Offers peer_id the one node n. */
int cluster_offer_node(struct cluster *c, const char *peer_id, const struct cluster_node *n);
/* An offer from the up peer peer_id: wants go back for what this node lacks and does not hear
 * first hand. -EBADMSG when it is not an offer of at most CLUSTER_MAX_NODES valid entries. */
int cluster_receive_offer(struct cluster *c, const char *peer_id, json_object *msg);
/* Asks peer_id for origin's summary unless it was asked of peer_id within the last refresh
 * interval: 1 asked, 0 not now, < 0 when it cannot go. */
int cluster_want_from(struct cluster *c, const char *peer_id, const char *origin);
/* origin's summary came: a want for it is answered. */
void cluster_want_answered(struct cluster *c, const char *origin);
