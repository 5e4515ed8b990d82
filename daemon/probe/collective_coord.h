/*
 * The coordinator's side of a collective: which rank is where, whether a stage ran past its
 * deadline, and the report. Every rank goes through five stages: spawn (the start sent, until its
 * helper says a first phase), unique id (CUDA and buffers ready, until rank 0's id reached it),
 * init (ncclCommInitRank), run (every op and size) and report (its result). The collective is in
 * the stage of its slowest rank, and each stage has its own deadline from when the collective
 * entered it: past it, the ranks still in that stage are named with their last phase. A rank that
 * fails ends the collective, after a short grace in which the others may say why they failed too.
 * Pure: the caller passes the time, sends the messages and runs the timer.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "collective_wire.h"

enum collective_stage {
        COLLECTIVE_STAGE_SPAWN,
        COLLECTIVE_STAGE_ID,
        COLLECTIVE_STAGE_INIT,
        COLLECTIVE_STAGE_RUN,
        COLLECTIVE_STAGE_REPORT,
        COLLECTIVE_STAGE_DONE,
};
#define COLLECTIVE_STAGES    COLLECTIVE_STAGE_DONE
#define COLLECTIVE_GRACE_SEC 3.0 /* after a rank failed, for the others' own reasons */

struct collective_member {
        char node_id[33];
        char name[64];
        char address[64];
        enum collective_stage stage;
        char phase[COLLECTIVE_PHASE_MAX + 1]; /* the helper's last phase, "" before the first */
        json_object *result;                  /* its helper's result, NULL until it came */
        char error[COLLECTIVE_REASON_MAX];    /* why it did not finish, when the coordinator knows */
};

struct collective_coord {
        char cid[33];
        int n;
        struct collective_member m[COLLECTIVE_NODES_MAX];
        enum collective_stage stage;
        double stage_since;
        double allowance[COLLECTIVE_STAGES];
        double started, ended;
        double failed_at; /* when the first rank failed, 0: none yet */
        int failed_rank;  /* that rank, -1: none */
        bool timed_out;
        char error[COLLECTIVE_REASON_MAX];
};

/* The stage a helper's phase puts its rank in. */
enum collective_stage collective_stage_of_phase(const char *phase, int rank);
const char *collective_stage_name(enum collective_stage stage);
/* members: the plan's nodes taking part, [{name, node_id, address}] in rank order (2 to 64). */
int collective_coord_init(struct collective_coord *c, const char *cid, json_object *members,
                          const double allowance[COLLECTIVE_STAGES], double now);
void collective_coord_free(struct collective_coord *c);
/* The rank of node_id, -1 when it is not a member. */
int collective_coord_rank_of(const struct collective_coord *c, const char *node_id);
void collective_coord_phase(struct collective_coord *c, int rank, const char *phase, double now);
/* result: the rank's helper result (a reference is taken). */
void collective_coord_result(struct collective_coord *c, int rank, json_object *result, double now);
/* Whether it is over at now (every rank reported, the grace after a failure passed, or a stage's
 * deadline passed: the ranks behind are named then). */
bool collective_coord_is_over(struct collective_coord *c, double now);
/* When is_over should be asked again. */
double collective_coord_next_check(const struct collective_coord *c);
/* The result: {cid, status, error, nranks, stage, nodes: [...], ops: [...], busbw_gbytes, ...}. */
json_object *collective_coord_report(const struct collective_coord *c);
