/*
 * Probes between this node and its peers: `rtt` (round trips), `tcp` (throughput), `pathmtu`
 * (whether full-MTU packets cross the path), `rdma` and `nccl`
 * (NCCL bus bandwidth), run by helper executables (sparkd-probe-KIND) as children with
 * deadlines, set up through the authenticated peer channel with a one-time token: the initiator
 * asks, the peer starts the server side and says where it listens (a port, or what the kind's
 * client needs, such as NCCL's unique id), the initiator runs the client side. A node runs
 * at most one bandwidth probe at a time (others queue here or are refused there); rtt probes may
 * overlap. Results go to the history, are judged against the expectation, and raise
 * probe-degraded / probe-failed alerts. A schedule runs them by itself.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "daemon/base/api.h"
#include "daemon/base/store.h"
#include "daemon/config/conf.h"
#include "daemon/host/counter_watch.h"
#include "daemon/peers/peers.h"
#include "history.h"
#include "inventory/fabric.h"

struct probes;

int probes_new(struct event_base *base, struct peers *peers, struct store *store, const char *node_id,
               struct probes **ret);
void probes_free(struct probes *probes);
int probes_configure(struct probes *probes, const struct sparkd_config *config);
/* API methods probe and probe-cancel (admin), history (read). */
int probes_register(struct probes *probes, struct api_server *api);
struct history *probes_history(struct probes *probes);
/* Where this node's fabric facts come from (the same the env method reads): kinds whose helpers
 * run with the NCCL environment need them. Fills *out (fabric_facts_free frees it). */
typedef int (*probes_facts_fn)(void *userdata, struct fabric_facts *out);
void probes_set_facts_source(struct probes *probes, probes_facts_fn gather, void *userdata);
/* The fabric links' throughput, which defers scheduled bandwidth probes past [probe] busy_gbps
 * (borrowed; NULL: never busy). */
void probes_set_counter_watch(struct probes *probes, const struct counter_watch *watch);
/* Whether a cable joins this node and peer_id (directly, or through one switch): the schedule
 * probes only such pairs. NULL, or a function answering true, probes every pair. */
typedef bool (*probes_linked_fn)(void *userdata, const char *peer_id);
void probes_set_link_filter(struct probes *probes, probes_linked_fn linked, void *userdata);
/* The rails' verdict of the newest result per peer and kind that has one:
 * [{peer, kind, started_at, diagnosis}], for the doctor. A reference to an answer kept until the
 * history changes: to read, not to change. */
json_object *probes_rail_verdicts(struct probes *probes);
