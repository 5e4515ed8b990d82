/*
 * The diagnosis of a finished bandwidth probe: the verdict per rail and direction of its result,
 * and one alert per rail and direction entering stale-initialization.
 */
#pragma once

#include <json-c/json.h>

#include "probe_internal.h"

/* Adds the verdict to out's "diagnosis"; *status becomes "degraded" when it is not ok. */
void probe_diagnose(struct probe *p, json_object *out, const char **status);
