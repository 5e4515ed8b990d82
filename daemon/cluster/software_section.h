/*
 * This node's "software" section in the cluster view (what inventory/software.c reads: the NCCL
 * libraries with their build ids, driver, kernel, firmware, sparkd's version), and every up
 * node's, for the doctor's consistency check.
 */
#pragma once

#include <json-c/json.h>

#include "cluster.h"

/* Reads this node's software under host_root afresh and hands it to the cluster view, which
 * sends it to peers only when it changed. */
void software_section_publish(struct cluster *c, const char *host_root);
/* This node's section published anew, then every node's that is not stale, this node first:
 * [{node_id, name, software}] (a new reference). */
json_object *software_section_nodes(struct cluster *c, const char *host_root);
