/*
 * Events: the things sparkd tells the world about. Each type has a stable name (SPARKD_EVENT),
 * a journal MESSAGE_ID and a default priority. Emitting one logs it and hands it, as a JSON
 * object, to the sink (the API server's subscribers).
 */
#pragma once

#include <json-c/json.h>

#include "log.h"

enum event_type {
        EVENT_DAEMON_STARTED,
        EVENT_DAEMON_STOPPING,
        EVENT_CONFIG_RELOADED,
        EVENT_CONFIG_REJECTED,
        EVENT_STATE_QUARANTINED,
        EVENT_LINK_DOWN,
        EVENT_LINK_UP,
        EVENT_LINK_FLAPPING,
        EVENT_LINK_STABLE,
        EVENT_MTU_CORRECTED,
        EVENT_MTU_DRIFT,
        EVENT_ADMIN_STATE_CORRECTED,
        EVENT_ADMIN_STATE_DRIFT,
        EVENT_SYSCTL_CORRECTED,
        EVENT_SYSCTL_DRIFT,
        EVENT_PEER_UP,
        EVENT_PEER_DOWN,
        EVENT_PEER_REJECTED,
        EVENT_PEER_MTU_MISMATCH,
        EVENT_PROBE_DONE,
        EVENT_PROBE_DEGRADED,
        EVENT_PROBE_FAILED,
        EVENT_STALE_INITIALIZATION,
        EVENT_GID_CHANGED,
        EVENT_PORT_ERRORS,
        EVENT_TOPOLOGY_CHANGED,
        EVENT_WIRING_PROBLEM,
        _EVENT_TYPE_MAX,
};

typedef void (*event_sink_fn)(json_object *event, void *userdata);

const char *event_type_to_string(enum event_type type);
int event_type_from_string(const char *name, enum event_type *out);
const char *event_type_message_id(enum event_type type);

/* One sink at a time; the event object is only borrowed for the call. */
void event_set_sink(event_sink_fn sink, void *userdata);

void event_emit(enum event_type type, const struct log_field *fields, size_t n, const char *fmt, ...)
        _printf_(4, 5);
