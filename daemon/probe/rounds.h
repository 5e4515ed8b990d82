/*
 * The bandwidth probe schedule: every node sorts the known node ids (byte order) and runs the
 * circle method (round-robin tournament), so all nodes compute the same rounds without talking.
 * Each round is a set of disjoint pairs (no node runs two probes at once); one cycle of rounds
 * holds every pair exactly once. Pure logic: the clock is a parameter.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rounds;

struct rounds_pair {
        const char *initiator; /* the lower id: it starts the probe */
        const char *responder;
};

/* Copies and sorts the ids and drops duplicates; they need not outlive the call. n == 0 or a
 * NULL id is -EINVAL. One node alone gives a schedule with no rounds. */
int rounds_build(char *const *node_ids, size_t n, struct rounds **ret);
void rounds_free(struct rounds *s);

/* N-1 rounds for an even number N of distinct nodes; N for an odd number (one idle node per
 * round); 0 below two nodes. */
size_t rounds_count(const struct rounds *s);

/* Writes up to max pairs of the round to out (which may be NULL when max is 0) and returns how
 * many the round has; 0 for a round out of range. The ids live as long as s. */
size_t rounds_pairs(const struct rounds *s, size_t round, struct rounds_pair *out, size_t max);

/* This node's partner in the round (an id owned by s) and whether it starts the probe.
 * -ENOENT: idle in this round; -ESRCH: node_id is not in the schedule; -EINVAL: no such round. */
int rounds_partner(const struct rounds *s, size_t round, const char *node_id, const char **partner,
                   bool *is_initiator);

/* The round due at a time: (t / interval) mod rounds, 0 when there are no rounds or the interval
 * is 0. Nodes agree on it without talking because their clocks are NTP-synchronised; a skew of a
 * second or so only makes the two ends of a pair see the round boundary apart, so the
 * responder answers a little late or the probe waits for the next slot; nothing breaks. */
size_t rounds_at(const struct rounds *s, uint64_t unix_time_sec, uint64_t interval_sec);

/* A delay in [0, max_jitter_sec) for the pair in that round (or slot): a hash of both ids and
 * the index, so both ends compute the same value whatever order they name the ids in, and the
 * pairs of one round do not all start in the same second. 0 when max_jitter_sec is 0. */
uint64_t rounds_jitter(const char *a, const char *b, uint64_t round_index, uint64_t max_jitter_sec);

/* Seconds from unix_time_sec until a pair's round is due in the slot (of interval_sec) that time
 * falls in: its jitter into the slot, counted from started_sec instead where this node started
 * later in the slot, so that nodes started together (a cluster powered on, a fleet upgraded) do
 * not start every pair of the round in the same second. 0 when due; never past the slot's end,
 * where the next slot's round is looked at. */
uint64_t rounds_wait(uint64_t unix_time_sec, uint64_t interval_sec, uint64_t jitter_sec,
                     uint64_t started_sec);

/* Seconds into an rtt round (of interval_sec) at which node_id starts its probe of a light kind
 * ("rtt", "pathmtu") to peer_id: a hash of both ids and the kind, the same every round, so each
 * pair is measured every interval exactly; within the first half of the round, so a node with
 * 31 peers starts its 62 helpers seconds apart rather than at once (each rtt then measures the
 * link, not this node's other probes), and all are measured well before the next round. An rtt
 * probe, started by one end, has one offset for both ends; pathmtu, which each end measures in
 * its own direction, one for each direction. */
uint64_t rounds_light_offset(const char *node_id, const char *peer_id, const char *kind,
                             uint64_t interval_sec);
