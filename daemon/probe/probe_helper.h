/*
 * The helper of a probe (sparkd-probe-KIND): whether it is installed, starting it as the server
 * or the client side, and what its JSON lines and its exit mean. It reports to whoever started
 * it through the ops given at start, and never ends a probe itself; also what the peer channel
 * may carry of a server helper's listening line (probe-ready).
 */
#pragma once

#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>

#include "probe_internal.h"

struct probe_helper_ops {
        /* The server helper listens: line holds its port and the fields for the client helper. */
        void (*on_listening)(struct probe *p, json_object *line);
        /* A progress line of the client helper, for whoever waits for the probe. */
        void (*on_progress)(struct probe *p, json_object *line);
        /* The helper is gone (p->child is NULL again): error is NULL when its result says ok, else
         * why it failed, with p->is_unavailable set when this node cannot run the kind. */
        void (*on_exit)(struct probe *p, const char *error);
};

#define PROBE_HELPER_PATH_MAX (PATH_MAX + 32)

/* Where the kind's helper is (HELPER_DIR/sparkd-probe-KIND) and whether it can run from there. */
bool probe_helper_find(const struct probes *ps, const struct probe_kind *kind,
                       char path[PROBE_HELPER_PATH_MAX]);
/* Whether the kind's helper is installed here; else p->error says why and the probe is
 * unavailable. */
bool probe_helper_is_installed(struct probe *p);
/* Starts p's helper as the server, or as the client with the port and the fields of the server's
 * listening line (NULL for none); p->error says why on failure. ops outlive the helper. */
int probe_spawn_helper(struct probe *p, bool server, unsigned port, json_object *ready,
                       const struct probe_helper_ops *ops);

/* Fields from a peer's probe-ready: what a client helper may get in its environment. */
bool probe_ready_fields_ok(json_object *fields);
/* What one JSON line from a helper's stdout is; a phase must be a string to count. */
enum helper_line {
        HELPER_LINE_OTHER, /* not for the daemon: ignored */
        HELPER_LINE_RESULT,
        HELPER_LINE_LISTENING, /* the server helper's port and fields for the client helper */
        HELPER_LINE_PROGRESS,
};
enum helper_line probe_helper_line_kind(json_object *line);
/* The probe-ready peer message for a listening line: its port and the fields that may travel. */
json_object *probe_ready_message(const char *id, json_object *line);
