/*
 * This node's netplan file from the topology map's address plan, planned when asked
 * (topology-netplan-write) and written by `sparkc topology --netplan --write` run as root: the
 * daemon runs as user sparkd under ProtectSystem=strict and may not write /etc/netplan. A netdev
 * with an IPv4 address the plan does not give it, while its byte counters show traffic (or while
 * its traffic is not known), is left out of the file and named with why: a netdev that carries
 * traffic is never readdressed.
 */
#pragma once

#include <json-c/json.h>

#include "common/topology_netplan.h"
#include "inventory/fabric.h"

/* A netdev carries traffic past this many Gb/s in either direction: LLDP and the peer channel's
 * heartbeats stay far below, any job far above. */
#define NETPLAN_WRITE_TRAFFIC_GBPS 0.001

/* Drops from plan the netdevs that must keep their addresses, appending {netdev, why} for each
 * to refused. */
void netplan_write_refuse_busy(struct topology_netplan *plan, const struct fabric_facts *f,
                               json_object *refused);

/* The file for the node node_id in map, keyed by this host's own netdevs (f's), less the refused
 * netdevs, for path (/etc/netplan/60-sparkd-fabric.yaml under the host root). *result: {path,
 * yaml (the file's text; null when no netdev is left), netdevs: [...], refused: [{netdev, why}]}.
 * -ENOENT/-ENODATA with why when the map has no plan for node. */
int netplan_write_plan(json_object *map, const char *node_id, const struct fabric_facts *f, const char *path,
                       json_object **result, char *why, size_t why_size);
