/*
 * The nodes a multi-node job starts on, as this node sees them: every node it knows (itself and
 * its peers) with the fabric address it reaches each on, whether it is up and what its doctor
 * says; which of them a job may use (up, and a doctor that does not fail), the head every node
 * picks for the rendezvous without asking the others, and each node's rank. Pure.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

struct job_node {
        char node_id[64];
        char name[64];
        char address[64]; /* the fabric address this node reaches it on, "" when none is known */
        bool is_self;
        bool is_up;
        char doctor[16];      /* "ok", "warning", "failed"; "" when not known */
        char doctor_why[256]; /* its failing checks, when it fails */
        bool is_doctor_stale;
        bool is_name_shared; /* another node id carries its name in the cluster view */
};

struct job_nodes {
        struct job_node *v;
        size_t n;
};

int job_nodes_add(struct job_nodes *nodes, const struct job_node *node);
void job_nodes_free(struct job_nodes *nodes);

/* This node's own fabric address: the first IPv4 address of a fabric netdev, preferring one with
 * an active RDMA port; its netdev in ifname. false when it has none. */
struct fabric_facts;
bool job_own_address(const struct fabric_facts *f, char *address, size_t size, char *ifname, size_t ifsize);

/* The peers method's result read into nodes (peers that are up or down, by node id; duplicates,
 * rejected and self entries left out), the address being the connection's remote end. */
int job_nodes_add_peers(struct job_nodes *nodes, json_object *peers);

/*
 * The plan: {nodes: [{name, node_id, address, self, rank, doctor}] in rank order, left_out:
 * [{name, node_id, address, reason}], head: {name, node_id, address, why} or null, error (why
 * there is no head) or null, rank (this node's, null when it is left out), size}. Rank order is
 * the head first, then the others by name (node id between equal names): every node computes
 * the same order from the same view. head_name: [cluster] head, NULL for none.
 */
json_object *job_plan_build(const struct job_nodes *nodes, const char *head_name);
/* Whether head_name names exactly one node: carried by one node of nodes, and none of them
 * marked as sharing its name. A name two nodes share makes neither the head. */
bool job_head_is_unique(const struct job_nodes *nodes, const char *head_name);
