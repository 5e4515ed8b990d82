/*
 * The cabling as the daemon knows it: this node's neighbour table (daemon/fabric/neighbours.c
 * from the links, the LLDP watch and the peers) published as the cluster's "neighbours" section,
 * and the methods neighbours (this node's table) and topology (the map every node derives from
 * all tables, with its findings). Rebuilt when lldpd, a link or the cluster changes; once a new
 * map held still for 2 s, a change of its shape or links is a topology-changed event and each
 * finding it did not have a wiring-problem event.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>
#include <stdbool.h>

#include "daemon/base/api.h"
#include "daemon/cluster/cluster.h"
#include "daemon/config/conf.h"
#include "daemon/host/links.h"
#include "daemon/host/lldp_watch.h"
#include "daemon/peers/peers.h"

struct cabling;

struct cabling_sources {
        struct links *links;
        struct lldp_watch *lldp;
        struct peers *peers;
        struct cluster *cluster;
        const char *node_id;
};

int cabling_new(struct event_base *base, const struct cabling_sources *sources, struct cabling **ret);
void cabling_free(struct cabling *c);
/* Takes the expectations of the map ([cluster] topology and nodes). */
void cabling_configure(struct cabling *c, const struct sparkd_config *config);
/* Something this node's table is built from changed: rebuild and publish it. */
void cabling_update(struct cabling *c);
/* The topology map (a new reference), NULL while not known. */
json_object *cabling_topology(struct cabling *c);
/* Does the map join this node and peer_id by a cable (or a switch)? true while no map with a
 * link is known, so the probe schedule then probes every pair. */
bool cabling_joins(struct cabling *c, const char *peer_id);
int cabling_register(struct cabling *c, struct api_server *api);
