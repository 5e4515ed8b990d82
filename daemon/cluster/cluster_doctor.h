/*
 * A node's full doctor over the peer channel: "cluster-doctor-request" asks an up peer, which
 * answers "cluster-doctor-reply" with its doctor's result. The summary carries only the checks
 * that are not ok; this is how `sparkc doctor --node` shows the rest. Answers are cached for a
 * second, so a peer asking often costs at most one doctor run a second; a question not answered
 * within its timeout ends with why.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>

#include "daemon/fabric/fabric_api.h"
#include "daemon/peers/peers.h"

#define CLUSTER_DOCTOR_MAX_ASKS 16

struct cluster_doctor;

/* doctor: how this node's doctor runs, to answer peers (must outlive the module). */
int cluster_doctor_new(struct event_base *base, struct peers *peers, const struct fabric_api_context *doctor,
                       struct cluster_doctor **ret);
void cluster_doctor_free(struct cluster_doctor *cd);

/* done gets the peer's doctor (borrowed) or NULL and why; it runs once, never from inside
 * cluster_doctor_ask. Returns an ask id > 0 for cluster_doctor_cancel, or a negative errno
 * (-ENOTCONN: peer_id is not up; -EBUSY: CLUSTER_DOCTOR_MAX_ASKS are waiting). */
typedef void (*cluster_doctor_done_fn)(json_object *doctor, const char *why, void *userdata);
int cluster_doctor_ask(struct cluster_doctor *cd, const char *peer_id, uint64_t timeout_usec,
                       cluster_doctor_done_fn done, void *userdata);
/* Forgets an ask; its done does not run. */
void cluster_doctor_cancel(struct cluster_doctor *cd, int ask_id);
