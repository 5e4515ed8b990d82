/*
 * What describes one probe kind: the helper that measures it, the parameters it takes (range,
 * default, the helper option each becomes and on which side), the number a result is judged by,
 * and how long it may take. The kinds themselves are in probe_kinds.h.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf.h"

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
        /* The helper option that names this node's twin devices ([probe] rdma_twins), given to the
         * helper in both roles when the config sets them; NULL: the kind takes none. */
        const char *twins_option;
};
