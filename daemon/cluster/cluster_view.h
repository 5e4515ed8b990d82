/*
 * The whole cluster from the nodes' summaries, pure: per link (a pair of nodes, in name order)
 * the newest measurement of each probe kind in each direction, whichever end measured it; and
 * every node's open alerts, newest first. The same summaries give the same JSON on every node.
 */
#pragma once

#include <json-c/json.h>

/* From the "nodes" of cluster_nodes_to_json: [{a: {node_id, name}, b: {...}, kinds: [{kind,
 * metric, a_to_b: {value, verdict, at, measured_by} | null, b_to_a: ...}]}]. */
json_object *cluster_view_links(json_object *nodes);
/* [{node_id, name, stale, id, status, subject, summary, since}], newest since first. */
json_object *cluster_view_alerts(json_object *nodes);
