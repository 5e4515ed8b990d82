/*
 * The probe kinds, one table: for each, the helper that measures it, the parameters it takes
 * (range, default, the helper option each becomes and on which side), the number a result is
 * judged by, and how long it may take. The rest of the probe code is the same for every kind,
 * so adding a kind is adding a row and its helper executable.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"

/* Room for this many kinds in per-kind arrays. */
#define PROBE_KINDS_MAX 8

enum probe_side {
        PROBE_SIDE_CLIENT = 1 << 0, /* the initiator's helper, which measures */
        PROBE_SIDE_SERVER = 1 << 1, /* the peer's helper, which listens */
        PROBE_SIDE_BOTH = PROBE_SIDE_CLIENT | PROBE_SIDE_SERVER,
};

enum probe_param_type {
        PROBE_PARAM_INTEGER, /* a whole number in [min, max] */
        PROBE_PARAM_STRING,  /* one string: one of choices, or what check accepts */
        PROBE_PARAM_LIST,    /* an array of at most max different strings, each as for STRING */
};

/* The longest string a string parameter (or list item) may be. */
#define PROBE_PARAM_STRING_MAX 256

struct probe_param_spec {
        const char *name;       /* in the API's params and the peer's probe-request */
        uint64_t min, max, def; /* integers; for lists, max is the most items */
        const char *option;     /* the helper's option (repeated per list item); NULL: not for it */
        unsigned sides;
        bool is_switch; /* the option is given bare, when the value is not 0 */
        enum probe_param_type type;
        const char *def_string;     /* a string's default; a list's, items separated by commas */
        const char *const *choices; /* the strings allowed, NULL-terminated; NULL: check decides */
        /* Checks one string; err says what is wrong. NULL: choices decide. */
        int (*check)(const char *value, char *err, size_t err_size);
        const char *what; /* what a string is, for messages and probe-kinds: "NAME=VALUE" */
        /* A list of NAME=VALUE put into both helpers' environment, not on their command line;
         * items must name different variables. */
        bool is_environment;
};

struct probe_kind {
        const char *name;
        const char *helper; /* executable in the helper directory */
        const char *summary;
        bool is_bandwidth;  /* holds this node's one bandwidth slot */
        const char *metric; /* the key of the result's number that is judged */
        const char *unit;   /* how that number reads in an alert */
        bool higher_is_better;
        const struct probe_param_spec *params; /* ends with a NULL name */
        /* Seconds the measurement itself takes with these parameters. */
        unsigned (*measure_sec)(json_object *params);
        /* Seconds on top for what comes before measuring (device and library start-up). */
        unsigned setup_sec;
        /* The expected value from the config, 0 when none is set. */
        double (*configured_expectation)(const struct sparkd_config *config);
        /* A key of the helper's result holding the expectation the hardware implies (rdma: the
         * port's payload rate at its speed and MTU), used when the config sets none; NULL: none. */
        const char *result_expectation;
        /* The string parameter naming the environment mode (auto, safe, dmabuf): the helpers then
         * run with the NCCL environment `sparkc env --mode MODE` gives on their node. NULL: none. */
        const char *env_mode_param;
        /* Checks what one parameter alone cannot (min below max, say); NULL: nothing more. */
        int (*check_params)(json_object *params, char *err, size_t err_size);
        /* Bytes of this node's memory the helper takes with these parameters: its host buffers,
         * and its device buffers when the GPU shares the node's memory (unified_memory). The
         * memory guard (probe_memory.h) refuses a probe that would leave too little. NULL: the
         * kind's memory does not grow with its parameters. */
        uint64_t (*memory_needed)(json_object *params, bool unified_memory);
};

const struct probe_kind *probe_kind_find(const char *name);
/* The kinds in table order, for lists and help texts; NULL past the last. */
const struct probe_kind *probe_kind_at(size_t i);
/* The kind's position in the table, below PROBE_KINDS_MAX. */
size_t probe_kind_index(const struct probe_kind *kind);
/* "rtt, tcp, ..." */
void probe_kind_names(char *buf, size_t size);

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
