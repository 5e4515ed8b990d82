/*
 * What a finished probe's result means: judged against the expectation for its peer and kind
 * (the config's, the port speed, or the learned baseline) and diagnosed per rail; the
 * probe-done, probe-degraded or probe-failed alert; the baseline taught by an ok result; the
 * entry kept in the history.
 */
#pragma once

#include <json-c/json.h>

#include "probe_internal.h"

/* Judges p's result (or its error, when not NULL), raises its alert and adds it to the history.
 * Returns the history entry, a reference the caller puts. */
json_object *probe_judge(struct probe *p, const char *error);
