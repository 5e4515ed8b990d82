/*
 * Which pairs of nodes a topology map joins with a cable: two nodes with a link between them,
 * or two nodes on the same switch. The probe schedule asks, so it measures cables that exist
 * (ring neighbours; on a switch every pair) and not pairs that have none.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

/* map: the topology map ({"links": [{"a": {node_id}, "b": {node_id} | {switch, port}}]}). */
bool topology_map_joins(json_object *map, const char *node_a, const char *node_b);
