/*
 * A member's side of a collective: this node's rank of sparkd-probe-nccl, run with the plan's
 * environment for this node, its phases and result told to the coordinator, the unique id written
 * to its stdin when it comes, and the helper killed when the coordinator aborts, goes away, or its
 * deadline passes; the helper's own deadline is the same, so nothing of it outlives the collective.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>

#include "collective_wire.h"

struct collective_rank;

struct collective_rank_ops {
        /* Sends fields (taken over) as a message of type to the coordinator. */
        void (*send)(void *userdata, enum collective_msg type, json_object *fields);
        /* The helper is gone and its result sent: the rank may be freed. */
        void (*ended)(void *userdata);
};

struct collective_rank_start {
        const char *helper;                /* sparkd-probe-nccl's path */
        const struct collective_wire *msg; /* the checked collective-start */
        json_object *params;               /* the nccl kind's parameters, checked and complete */
        char *const *env; /* NAME=VALUE, the plan's environment for this node and the overrides */
        unsigned nice;
};

int collective_rank_start(struct event_base *base, const struct collective_rank_start *start,
                          const struct collective_rank_ops *ops, void *userdata,
                          struct collective_rank **ret);
/* Hands the unique id to the helper (ranks above 0). */
int collective_rank_give_id(struct collective_rank *r, const char *nccl_id);
/* The coordinator was heard from: the rank's silence timer starts again. */
void collective_rank_heard(struct collective_rank *r);
/* Kills the helper; its result says why. */
void collective_rank_abort(struct collective_rank *r, const char *reason);
/* Frees r; a helper still running is killed first, with no more callbacks. */
void collective_rank_free(struct collective_rank *r);
const char *collective_rank_cid(const struct collective_rank *r);
int collective_rank_number(const struct collective_rank *r);
const char *collective_rank_coordinator(const struct collective_rank *r);
