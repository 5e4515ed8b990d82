/*
 * The collective NCCL probe: one rank of sparkd-probe-nccl on every member of the job plan (or
 * the members named), coordinated by the node asked (`probe-collective`, sparkc probe --kind nccl
 * --all), with no MPI and no SSH. The coordinator sends each member its rank; rank 0's unique id
 * goes through the coordinator to the other ranks; phases and results come back. Messages to a
 * node that is not an up peer (the far side of a ring) are relayed by the nodes between, each
 * copy taken once (collective_wire.h). The result, like nccl-tests' output (algbw and busbw per op
 * and size, every rank's transport and phases), is judged and kept in the history as an nccl
 * result whose peer is "cluster".
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>

#include "daemon/base/api.h"
#include "daemon/config/conf.h"
#include "daemon/peers/peers.h"
#include "history.h"
#include "probe.h"

struct collective;

/* What the layers above know: the job plan (job_plan.h; a new reference, NULL: none), and this
 * node's environment as `sparkc env --for torchrun` gives it (a new reference: {variables:
 * [{name, value}], ...}; NULL: none). */
struct collective_sources {
        json_object *(*plan)(void *userdata);
        json_object *(*job_env)(void *userdata);
        void *userdata;
        /* This node's fabric facts, for what the helper judges by (unified memory, the RDMA
         * devices: probe_env.h) and the memory guard. */
        probes_facts_fn facts;
        void *facts_userdata;
};

int collective_new(struct event_base *base, struct peers *peers, struct history *history,
                   const char *node_id, struct collective **ret);
void collective_free(struct collective *c);
void collective_configure(struct collective *c, const struct sparkd_config *config);
void collective_set_sources(struct collective *c, const struct collective_sources *sources);
/* API method probe-collective (admin). */
int collective_register(struct collective *c, struct api_server *api);
/* The last collective this node coordinated (a new reference, NULL: none yet), for the cluster
 * view. */
json_object *collective_last(struct collective *c);
