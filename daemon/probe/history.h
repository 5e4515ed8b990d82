/*
 * Probe results kept across restarts: the newest `limit` results in the state directory
 * (history.json, written atomically and at most once a second), and the baselines learned from
 * the first good results of each (peer, kind, parameters) when the config sets no expectation.
 * A baseline is kept apart from the bounded results: once learned it never moves.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>

#include "baselines.h"
#include "daemon/base/store.h"

#define HISTORY_BASELINE_SAMPLES BASELINE_SAMPLES

struct history;

/* store may be NULL: then nothing survives a restart, and the daemon says so at start. */
int history_new(struct event_base *base, struct store *store, size_t limit, struct history **ret);
void history_free(struct history *h);
void history_set_limit(struct history *h, size_t limit);

/* Takes a reference to result (a probe result object with "peer_id", "kind", "ok"). */
void history_add(struct history *h, json_object *result);
/* Changes whenever the results kept change (one added, the oldest dropped); never 0, and never
 * the same for two histories. What a reader derived from them (history_latest is a parse of up
 * to a thousand texts) holds while it stays the same. */
uint64_t history_generation(const struct history *h);
/* Newest first; filters may be NULL; peer matches name, node id or its prefix. */
json_object *history_query(struct history *h, const char *peer, const char *kind, size_t limit);
/* The same results as one array that prints as their text, made without a tree per result: for
 * a reply, where a thousand trees made and freed at once would stay in the heap. It holds
 * nothing to look into (its length is 0); it prints as PLAIN | NOSLASHESCAPE would. NULL when out
 * of memory. */
json_object *history_query_printed(struct history *h, const char *peer, const char *kind, size_t limit);
/* The learned baseline of `metric` for (peer_id, kind, params): the median of the first
 * HISTORY_BASELINE_SAMPLES values given to history_learn, or 0 while fewer were given. */
double history_baseline(struct history *h, const char *peer_id, const char *kind, json_object *params,
                        const char *metric);
/* Offers a good result's value to the baseline of (peer_id, kind, params); ignored once learned. */
void history_learn(struct history *h, const char *peer_id, const char *kind, json_object *params,
                   const char *metric, double value);
/* The newest result for each (peer, kind), for metrics; a deferred probe measured nothing and
 * is passed over. */
json_object *history_latest(struct history *h);
