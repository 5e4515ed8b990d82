/*
 * The NCCL variables a cluster's cabling shape wants (from the topology map, topology.h), each
 * only where the installed NCCL knows it: a table holds the release that introduced every
 * variable, checked against NCCL's source. Pure, like envgen.c, which calls it.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "inventory/fabric.h"

/* Appends {name, value, why} to vars and what was left out, and why, to notes. has_twins: an
 * active port of this node has a twin (NCCL_IB_HCA lists both). Returns {shape, nodes} for the
 * env result, or NULL when the facts have no map. */
json_object *envgen_topology_add(const struct fabric_facts *f, bool has_twins, json_object *vars,
                                 json_object *notes);
/* The NCCL release that introduced name ("2.30.7"), or NULL when the table does not know it. */
const char *envgen_nccl_since(const char *name);
/* Drops every variable the installed NCCL is older than (when its version is known), each with
 * a note naming the release it needs. */
void envgen_nccl_filter(const struct fabric_facts *f, json_object *vars, json_object *notes);
