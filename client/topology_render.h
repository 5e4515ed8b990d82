/*
 * The topology map (the daemon's topology method) for people and for Graphviz: a table of the
 * links with their state, speed, MTU, twins and subnet, then the findings; or a dot graph with
 * each node a cluster of its ports, switches as boxes and links coloured by state (ok green,
 * degraded orange, down red). A library of its own, so the tests render what sparkc prints.
 */
#pragma once

#include <json-c/json.h>
#include <stdio.h>

/* Returns 0, or -EINVAL when map is not a topology map. */
int topology_render_table(FILE *out, json_object *map);
int topology_render_dot(FILE *out, json_object *map);
