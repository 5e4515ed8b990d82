/*
 * The collective's peer-channel messages, checked where they enter. One collective runs one
 * rank of sparkd-probe-nccl on every member of the job plan; its coordinator and members talk in
 * these JSON lines, each an envelope {type, cid, from, to, hops, mid} and its own fields:
 *   collective-start  {rank, nranks, head, params, deadline_s}  coordinator -> member
 *   collective-id     {nccl_id}                                 rank 0 -> coordinator -> members
 *   collective-phase  {rank, phase}                             member -> coordinator
 *   collective-result {rank, result}                            member -> coordinator
 *   collective-abort  {reason}                                  coordinator -> member
 *   collective-alive  {}                  every COLLECTIVE_ALIVE_SEC, coordinator -> member
 * cid names the collective (32 hex digits), from and to are node ids (the first sender and the
 * last receiver), mid numbers the sender's messages so a relayed copy is taken once, and hops
 * counts the relays (at most COLLECTIVE_HOPS_MAX: a ring of COLLECTIVE_NODES_MAX nodes is that
 * many hops across). Pure.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COLLECTIVE_NODES_MAX    64
#define COLLECTIVE_HOPS_MAX     32
#define COLLECTIVE_ID_HEX       256 /* NCCL's unique id, 128 bytes */
#define COLLECTIVE_PHASE_MAX    32
#define COLLECTIVE_REASON_MAX   512
#define COLLECTIVE_RESULT_MAX   (32 * 1024) /* a rank's result as text, under the channel's 64 KiB */
#define COLLECTIVE_DEADLINE_MAX 86400
/* The coordinator says it is still there this often; a member that hears nothing from it for
 * COLLECTIVE_SILENCE_SEC stops its rank (a coordinator gone, on the far side of a ring too). */
#define COLLECTIVE_ALIVE_SEC   2
#define COLLECTIVE_SILENCE_SEC 10

enum collective_msg {
        COLLECTIVE_START,
        COLLECTIVE_ID,
        COLLECTIVE_PHASE,
        COLLECTIVE_RESULT,
        COLLECTIVE_ABORT,
        COLLECTIVE_ALIVE,
};

/* A message's envelope and fields as checked; strings point into the message. */
struct collective_wire {
        enum collective_msg type;
        const char *cid, *from, *to;
        unsigned hops;
        uint32_t mid;
        int rank, nranks;
        const char *head;    /* start: rank 0's address on the plan's plane */
        json_object *params; /* start: the nccl kind's parameters, checked by the kind */
        unsigned deadline_s; /* start: the whole collective's */
        const char *nccl_id; /* id */
        const char *phase;   /* phase */
        json_object *result; /* result: the helper's result, an object */
        const char *reason;  /* abort */
};

bool collective_wire_is_id(const char *s);
/* Checks msg (a peer's line of a collective- type): 0, or -EINVAL with why in err (the member, what
 * was expected, the limit). */
int collective_wire_read(json_object *msg, struct collective_wire *out, char *err, size_t size);
/* A new message's envelope, hops 0; the caller adds the type's fields. */
json_object *collective_wire_new(enum collective_msg type, const char *cid, const char *from, const char *to,
                                 uint32_t mid);
const char *collective_wire_type(enum collective_msg type);
