/*
 * Every node's open alerts in one list, newest first, from the nodes as cluster_nodes_to_json
 * gives them, pure: the same summaries give the same JSON on every node.
 */
#pragma once

#include <json-c/json.h>

/* [{node_id, name, stale, id, status, subject, summary, since}], newest since first. */
json_object *alerts_view(json_object *nodes);
