/* The collective module's state, shared by its peer side (collective.c) and its coordinator side
 * (collective_api.c); for these two files only. */
#pragma once

#include <limits.h>

#include "collective.h"
#include "collective_coord.h"
#include "collective_rank.h"
#include "collective_wire.h"

#define COLLECTIVE_SEEN_MAX 512 /* relayed messages remembered, so each is taken once */

struct collective {
        struct event_base *base;
        struct peers *peers;
        struct history *history;
        char node_id[33];
        char helper_dir[PATH_MAX];
        char host_root[PATH_MAX]; /* where the memory guard reads /proc/meminfo */
        uint64_t memory_margin;
        unsigned nice;
        double expect_busbw;
        double degraded_ratio;
        struct collective_sources sources;
        uint32_t next_mid;
        struct {
                char from[33];
                uint32_t mid;
        } seen[COLLECTIVE_SEEN_MAX];
        size_t seen_at;
        json_object *local; /* messages to this node itself, handled from the loop */
        struct event *local_event;
        /* This node's rank of a collective, at most one. */
        struct collective_rank *rank;
        struct event *rank_reaper; /* frees an ended rank from the loop */
        /* The collective this node coordinates, at most one. */
        struct collective_coord *coord;
        json_object *coord_params;
        bool plan_on_fabric; /* the plan's plane: one fabric subnet holds every member (a switch) */
        struct api_request *req;
        bool cancelled; /* its caller left: every rank stopped */
        struct event *coord_timer;
        struct event *coord_tick; /* every COLLECTIVE_ALIVE_SEC: the members and the caller told */
        json_object *last;
};

/* collective_relay.c: whether (from, mid) was taken already (remembered when not); msg to node
 * to when it is an up peer, else to every up peer to relay. */
bool collective_seen_before(struct collective *c, const char *from, uint32_t mid);
void collective_forward(struct collective *c, const char *to, json_object *msg);
/* Sends fields (taken over) as a message of type to node to, relayed when it is not an up peer. */
void collective_send(struct collective *c, enum collective_msg type, const char *cid, const char *to,
                     json_object *fields);
/* The coordinator's side of a checked message for this node. */
void collective_coord_message(struct collective *c, const struct collective_wire *w);
/* A member's connection went down: a coordinator that has it as a rank counts it failed. */
void collective_coord_peer_down(struct collective *c, const char *node_id);
/* The coordinator's side ends (the daemon stops): the caller is answered, the members told. */
void collective_coord_stop(struct collective *c);
double collective_now(void);
