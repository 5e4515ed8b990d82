/*
 * The fabric's load before a bandwidth probe: a probe over a training job takes bandwidth from
 * the job and measures a shared link. The busiest fabric link's throughput (the counter
 * watch's last look) is compared with [probe] busy_gbps: a scheduled probe is then deferred to
 * its next slot and recorded as such; an on-demand one runs, says so and is not judged.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "probe_internal.h"

/* Whether a fabric link carries more than busy_gbps; why then says which and how much
 * ("fa carries 9.41 Gb/s, more than [probe] busy_gbps 1"). */
bool probe_fabric_busy(const struct probes *ps, char *why, size_t size);
/* The history's record of a scheduled probe of kind with peer_id deferred for why. */
json_object *probe_deferred_result(struct probes *ps, const char *kind, const char *peer_id,
                                   const char *why);
