/*
 * The topology engine (pure): from every node's "neighbours" section (its fabric ports and what
 * LLDP or the peer channel sees at the far end of each) it derives the cluster's map: the shape
 * (direct pair, ring, full mesh, switch star, or mixed), each link end to end with speed and MTU
 * at both ends and the twins that carry it, the wiring findings the doctor reports, and the
 * address plan (one subnet per link, see address_plan.c for the scheme and why). The same
 * tables give byte-identical JSON on every node, whatever order they come in.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* One node's facts for the map: its id, name and parsed "neighbours" section. */
struct topology_node; /* opaque to callers; the engine's files see it in topology_model.h */

/* Parses one node's "neighbours" section. -EINVAL with why naming the field and what was
 * expected when the section is malformed; -E2BIG past TOPOLOGY_MAX_PORTS ports. */
int topology_node_parse(const char *node_id, const char *name, json_object *neighbours,
                        struct topology_node **ret, char *why, size_t why_size);
void topology_node_free(struct topology_node *n);
/* The node is held in the cluster view but confirmed by no node other than the one relaying it
 * (a chain's far end, or a compromised relay's invention): it is drawn, and a finding naming such
 * nodes alone is left out of the map's findings (counted in unconfirmed_findings). */
void topology_node_set_unconfirmed(struct topology_node *n, bool is_unconfirmed);

struct topology_expect {
        const char *shape; /* "auto"|"pair"|"ring"|"mesh"|"switch" */
        unsigned nodes;    /* 0: no expectation */
};

/* The map from every node's table: identical JSON on every node given the same tables
 * (sorted by node id, then port), with the address plan in it. expect may be NULL.
 * -E2BIG past TOPOLOGY_MAX_NODES nodes or when the plan's subnets run out. */
int topology_derive(struct topology_node *const *nodes, size_t n, const struct topology_expect *expect,
                    json_object **map);

/* Is s one of the shapes [cluster] topology takes? */
bool topology_expect_shape_is_valid(const char *s);
