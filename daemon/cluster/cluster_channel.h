/*
 * The cluster view on the peer channel: summaries travel as "cluster-summary" messages, peers
 * coming up and going down tell the view where to send, a peer's hello is what a summary it
 * sends for itself is checked against, and the heartbeat's tick is the view's refresh, so a
 * peer's heartbeat and this node's alive travel together.
 */
#pragma once

#include "cluster.h"
#include "daemon/peers/peers.h"

/* A cluster view for this node wired to peers; cluster_channel_free unhooks and frees it. */
int cluster_channel_new(struct event_base *base, struct peers *peers, const char *node_id, const char *name,
                        struct cluster **ret);
void cluster_channel_free(struct peers *peers, struct cluster *c);
