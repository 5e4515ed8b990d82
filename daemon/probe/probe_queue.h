/*
 * Starting probes this node initiates, for an API caller or the schedule: the peer is found,
 * then the probe runs at once, or waits in a bounded queue while the one bandwidth probe of this
 * node runs, and starts when that one has ended.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "daemon/base/api.h"
#include "probe_internal.h"

/* Starts (or queues) a probe with checked params (taken); on failure answers req (when given)
 * and returns the error. */
int probe_start(struct probes *ps, const struct probe_kind *kind, const char *peer, json_object *params,
                struct api_request *req, bool scheduled);
/* Runs the oldest queued probe when the bandwidth slot is free. */
void probe_start_next(struct probes *ps);
