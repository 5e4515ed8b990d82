/*
 * Baselines learned from the first good results of each (peer, kind, parameters, metric) when
 * the config sets no expectation: the median of the first BASELINE_SAMPLES values, and once
 * learned it never moves. They live in one JSON object, key -> { "samples": [...], "value" },
 * which the probe history saves and loads with its results; at most BASELINES_MAX of them, the
 * oldest going first.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#define BASELINE_SAMPLES 3
#define BASELINES_MAX    512

/* Adds saved's valid baselines to baselines; the rest of saved is dropped. */
void baselines_load(json_object *baselines, json_object *saved);
/* The learned baseline of metric for (peer_id, kind, params), or 0 while not yet learned. */
double baselines_value(json_object *baselines, const char *peer_id, const char *kind, json_object *params,
                       const char *metric);
/* Offers a good result's value: true when it was taken (what is saved changed), false once learned
 * or without memory. */
bool baselines_learn(json_object *baselines, const char *peer_id, const char *kind, json_object *params,
                     const char *metric, double value);
