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
        char node_id[64]; /* the node's id in the map */
        struct topology_netplan_entry entries[32];
        size_t n_entries; /* in netdev order */
};

/* The node id of node (a node id, or a name only one node of map has) into id; -ENOENT when no
 * node has it, -ENOTUNIQ when several nodes have that name; why says which. */
int topology_netplan_node_id(json_object *map, const char *node, char *id, size_t id_size, char *why,
                             size_t why_size);
/* The plan of the node with node_id in map (never matched by name: names are what others say).
 * Only netdevs that are netdev names (text_check.h) and, when own_netdevs is not NULL, in that
 * list (this node's own netdevs, for the file it writes) are keys; only IPv4 ADDRESS/PREFIX
 * strings are addresses. -ENOENT when the map has no such node, -ENODATA when no link of it has
 * planned addresses; why says which, with the map's node names. */
int topology_netplan_of(json_object *map, const char *node_id, char *const *own_netdevs,
                        struct topology_netplan *out, char *why, size_t why_size);
/* The netplan YAML of a plan, every key and value quoted (escape_yaml); NULL when out of memory. */
char *topology_netplan_yaml(const struct topology_netplan *plan);
