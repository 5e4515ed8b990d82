/*
 * One node's netplan file from the topology map's address plan (daemon/fabric/address_plan.h
 * says the scheme): the fabric netdevs of that node with their planned addresses and the MTU of
 * their links. sparkc prints it (sparkc topology --netplan) and sparkd writes it when asked:
 * both render it here, so what is shown is what is written.
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

/* One netdev of the plan: its planned addresses and MTU (0: not known). */
struct topology_netplan_entry {
        char netdev[64];
        char addresses[4][32];
        size_t n_addresses;
        int mtu;
};

struct topology_netplan {
        char node[64]; /* the node's name in the map */
        struct topology_netplan_entry entries[32];
        size_t n_entries; /* in netdev order */
};

/* The plan of node (its name or node id) in map. -ENOENT when the map has no such node, -ENODATA
 * when no link of it has planned addresses; why says which, with the map's node names. */
int topology_netplan_of(json_object *map, const char *node, struct topology_netplan *out, char *why,
                        size_t why_size);
/* The netplan YAML of a plan; NULL when out of memory. */
char *topology_netplan_yaml(const struct topology_netplan *plan);
