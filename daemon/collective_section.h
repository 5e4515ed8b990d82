/* The last collective NCCL probe this node coordinated, as its "collective" section of the
 * cluster view: what `sparkc cluster` shows for the whole cluster, small enough for a summary
 * (every text bounded). Pure. */
#pragma once

#include <json-c/json.h>

/* From the history's newest results (history_latest): {at, status, verdict, nranks, busbw_gbytes,
 * algbw_gbytes, expected_busbw_gbytes, expected_source, bytes, op, error, nodes: [{name, status,
 * last_phase, error}]}, or NULL when none of them is a collective. */
json_object *collective_section(json_object *latest);
