/*
 * A probe kind's parameters: checking what a request asks for against the kind, with every
 * default filled in, reading them back, and turning them into the helper's command line, its
 * environment and its deadline.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probe_kind.h"

/* Checks params (an object, or NULL for all defaults) against the kind: unknown keys, integers
 * out of range, strings that are not allowed, lists too long or with repeated items are refused
 * with a sentence in err. *out gets a new object holding every parameter of the kind, defaults
 * filled in. */
int probe_kind_params(const struct probe_kind *kind, json_object *params, json_object **out, char *err,
                      size_t err_size);
/* A parameter's value from an object probe_kind_params made. */
uint64_t probe_kind_param(const struct probe_kind *kind, json_object *params, const char *name);
/* A string parameter's value (the default when absent), NULL for no such string parameter. */
const char *probe_kind_param_string(const struct probe_kind *kind, json_object *params, const char *name);
/* The environment entries ("NAME=VALUE") of the kind's environment lists, in order: pointers
 * into params, at most max; returns how many. */
size_t probe_kind_environment(const struct probe_kind *kind, json_object *params, const char **out,
                              size_t max);
/* The parameter's description for probe-kinds: {name, type, min, max, default, choices, what}. */
json_object *probe_param_to_json(const struct probe_param_spec *spec);
/* Environment names a peer may set for a probe helper: NCCL_ and CUDA_ variables, but none that
 * names a file, a path or a plugin, which would let the network choose what the helper loads or
 * writes as root. 0 or -EINVAL with the reason in err. */
int probe_check_environment(const char *item, char *err, size_t err_size);

/* Appends the helper options for one side to argv (n entries used of max); numbers live in
 * storage (max entries of 24 bytes), strings in params. Returns 0 or -E2BIG. */
int probe_kind_helper_args(const struct probe_kind *kind, json_object *params, enum probe_side side,
                           char **argv, size_t *n, size_t max, char (*storage)[24]);

/* The deadline of one side's helper: measurement, the kind's set-up time and a margin. */
unsigned probe_kind_deadline_sec(const struct probe_kind *kind, json_object *params);
