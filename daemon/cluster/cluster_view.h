/*
 * The whole cluster from the nodes' summaries, pure: per link (a pair of nodes, in name order)
 * the newest measurement of each probe kind in each direction, whichever end measured it; and
 * every node's open alerts, newest first. The same summaries give the same JSON on every node.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "result_rows.h"

/* A node as the links view reads it: its results section as JSON text. */
struct cluster_view_node {
        const char *node_id;
        const char *name;
        bool is_stale;
        const char *results; /* NULL: none */
        size_t results_len;
};

/* [{a: {node_id, name}, b: {...}, kinds: [{kind, metric, a_to_b: {value, verdict, at,
 * measured_by, stale} | null, b_to_a: ...}]}], from the nodes in the order of
 * cluster_nodes_to_json. */
json_object *cluster_view_links(const struct cluster_view_node *nodes, size_t n);
/* [{node_id, name, stale, id, status, subject, summary, since}], newest since first. */
json_object *cluster_view_alerts(json_object *nodes);
