/*
 * One message to many peers, a few at a time: FANOUT_GROUP peers at once, the next group
 * FANOUT_GAP_USEC later. Every peer that gets a summary decrypts, parses and holds it at once,
 * so a summary sent to 31 peers in one go puts the whole cluster's work on it in the same few
 * milliseconds; where the nodes share cores (32 daemons on two, as the cluster benchmark runs
 * them), a node's API call then waited up to 45 ms behind the 31 receivers. Paced, the same
 * work spreads over 200 ms at 32 nodes; a cluster of five nodes or fewer gets it at once.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define FANOUT_GROUP    4
#define FANOUT_GAP_USEC 25000

/* Sends msg (a reference taken by the callee) to peer_id; < 0 when it cannot go. */
typedef int (*fanout_send_fn)(void *userdata, const char *peer_id, json_object *msg);

struct fanout;

int fanout_new(struct event_base *base, fanout_send_fn send, void *userdata, struct fanout **ret);
void fanout_free(struct fanout *f);
/* msg (taken over) to each of the n peers in to: the first group now, the rest on the timer. A
 * fan-out still going is replaced: its peers get msg, the newer message, those served already
 * too. A send that fails is not retried (the peer went down). 0, or -ENOMEM with nothing sent. */
int fanout_start(struct fanout *f, json_object *msg, const char (*to)[33], size_t n);
/* Whether a fan-out is going on: some peer is still to get its message. */
bool fanout_is_going(const struct fanout *f);
/* Whether peer_id is still to get the message of the fan-out going on. */
bool fanout_is_pending(const struct fanout *f, const char *peer_id);
/* Drops what is left unsent. */
void fanout_cancel(struct fanout *f);
