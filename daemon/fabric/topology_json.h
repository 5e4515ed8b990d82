/* The derived graph as the map's JSON (the format topology.h describes): nodes, links with both
 * ends, state, twins and addresses, findings; every list in the graph's sorted order. */
#pragma once

#include <json-c/json.h>

#include "topology_model.h"

/* Takes the graph's findings array. */
json_object *topology_json_map(struct topology_graph *g);
