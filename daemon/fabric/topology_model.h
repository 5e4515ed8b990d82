/*
 * The topology engine's model, shared by its files (topology_node.c parses a node's
 * "neighbours" section into it, topology.c derives the links and the shape, topology_checks.c
 * the findings, address_plan.c the addresses); callers outside the engine use topology.h only.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "topology.h"

#define TOPOLOGY_NAME_MAX      64
#define TOPOLOGY_ID_MAX        64
#define TOPOLOGY_MAX_PORTS     32  /* a node's fabric netdevs; more is refused */
#define TOPOLOGY_MAX_NODES     254 /* the address plan gives each node a host number 1 to 254 */
#define TOPOLOGY_MAX_ADDRESSES 8

struct topology_neighbour {
        char source[8]; /* "lldp" | "peer" */
        char chassis_id[TOPOLOGY_ID_MAX];
        char sysname[TOPOLOGY_NAME_MAX];
        char port_id[TOPOLOGY_ID_MAX];
        char port_id_subtype[16];
        char port_descr[TOPOLOGY_NAME_MAX];
        int speed_mbps; /* what the far end advertises; -1 unknown */
        bool is_bridge;
        char node_id[TOPOLOGY_ID_MAX]; /* "" when the far end is not matched to a sparkd node */
};

struct topology_port {
        char netdev[TOPOLOGY_NAME_MAX];
        char mac[TOPOLOGY_ID_MAX];
        char twin[TOPOLOGY_NAME_MAX];
        int rail;
        int speed_mbps; /* -1 unknown */
        int mtu;
        bool is_up;
        char oper[16];
        char addresses[TOPOLOGY_MAX_ADDRESSES][64];
        size_t n_addresses;
        bool has_neighbour;
        struct topology_neighbour neighbour;
};

struct topology_node {
        char node_id[TOPOLOGY_ID_MAX];
        char name[TOPOLOGY_NAME_MAX];
        char chassis_id[TOPOLOGY_ID_MAX];
        char chassis_name[TOPOLOGY_NAME_MAX];
        char lldpd[128];
        /* Held in the cluster view but confirmed by no node other than the one relaying it: drawn,
         * and its findings (those naming no confirmed node) left out of the verdict. */
        bool is_unconfirmed;
        size_t n_ports;
        /* Sorted by netdev; as many as the node has (at most TOPOLOGY_MAX_PORTS): the tables of
         * every node are made again at each change of the cluster, and a full-size array of 32
         * ports is 34 KiB a node where most nodes have two. */
        struct topology_port ports[];
};

enum topology_state {
        TOPOLOGY_LINK_OK,
        TOPOLOGY_LINK_DEGRADED,
        TOPOLOGY_LINK_DOWN,
};

enum topology_far {
        TOPOLOGY_FAR_NODE,   /* another sparkd node */
        TOPOLOGY_FAR_SWITCH, /* a bridge, or a foreign chassis several nodes' ports face */
        TOPOLOGY_FAR_OTHER,  /* something that is neither: a host without sparkd */
};

/* One end of a link on a sparkd node: the node, its physical port (rail) and the twins of that
 * port that see the far end, in name order (the first names the end). */
struct topology_end {
        size_t node; /* index into the graph's sorted nodes */
        int rail;
        const struct topology_port *twins[4];
        size_t n_twins;
};

/* One twin pair's addresses: the a-end netdev, the b-end netdev ("" at a switch), the subnet. */
struct topology_address {
        char a_netdev[TOPOLOGY_NAME_MAX];
        char b_netdev[TOPOLOGY_NAME_MAX];
        char subnet[32];
        char a[32];
        char b[32]; /* "" at a switch */
};

struct topology_link {
        struct topology_end a;
        enum topology_far far;
        struct topology_end b;            /* TOPOLOGY_FAR_NODE */
        char far_name[TOPOLOGY_NAME_MAX]; /* switch or other host: its system name or chassis id */
        char far_chassis[TOPOLOGY_ID_MAX];
        char far_port[TOPOLOGY_ID_MAX];
        bool is_confirmed; /* both ends see each other */
        enum topology_state state;
        char state_why[160];
        struct topology_address addresses[4]; /* one per twin pair */
        size_t n_addresses;
};

/* Everything derive works on: the nodes sorted by id, the links sorted by their a end. */
struct topology_graph {
        struct topology_node *const *nodes;
        size_t n_nodes;
        struct topology_link *links;
        size_t n_links;
        size_t max_links; /* what links has room for */
        const struct topology_expect *expect;
        bool *adjacent; /* [x * n_nodes + y]: a cable joins nodes x and y */
        const char *shape;
        unsigned ring_pairs_missing; /* ring: pairs of nodes with no direct link */
        int nominal_speed_mbps;      /* the fastest speed any fabric port runs at */
        /* Far ends matched to a sparkd node by id whose table is not among the nodes. */
        struct topology_absent {
                char node_id[TOPOLOGY_ID_MAX];
                char sysname[TOPOLOGY_NAME_MAX];
                json_object *nodes; /* the names of the nodes that face it */
                json_object *ports; /* "node:netdev" of the ports that face it */
        } absent[TOPOLOGY_MAX_NODES];
        size_t n_absent;
        json_object *findings;
        unsigned unconfirmed_findings; /* left out: they named unconfirmed nodes alone */
};

/* The port of node n that is named netdev, or NULL. */
const struct topology_port *topology_node_port(const struct topology_node *n, const char *netdev);
/* Case-insensitive equality of MAC addresses and chassis ids written with ':' or '-'. */
bool topology_same_id(const char *a, const char *b);

/* topology_checks.c: appends the findings of the derived graph to g->findings. */
void topology_checks_run(struct topology_graph *g);
