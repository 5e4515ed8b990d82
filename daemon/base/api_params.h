/*
 * Checking a request's params against what its method declares (struct api_param), before the
 * method runs: the shape (an object, or nothing for a method that takes none), unknown members,
 * missing ones, types, allowed values. A refusal is one sentence in one format, naming the
 * method, the member and what was expected.
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

#include "api.h"

/* Room for a refusal; longer sentences are cut. */
#define API_PARAMS_WHY_MAX 1024

/* 0 with *checked the params the method is to see: NULL for none (absent, an empty array, or an
 * empty object for a method that takes none), else params itself (not a new reference). -EINVAL
 * with the reason in why. */
int api_params_check(const struct api_method *method, json_object *params, json_object **checked, char *why,
                     size_t size);
