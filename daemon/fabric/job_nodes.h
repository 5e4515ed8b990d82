/*
 * The nodes a multi-node job may start on, as the cluster view holds them: every node of the
 * view (this one included) with whether its summary is fresh, what its doctor section says, and
 * the addresses its "addresses" section publishes (its management address and its fabric
 * addresses with their prefixes), each checked here, where they enter, since they come from
 * other nodes. The plan is made from them (job_plan.h). Pure.
 */
#pragma once

#include <json-c/json.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JOB_NODE_MAX_ADDRESSES 16

struct job_address {
        char ifname[IF_NAMESIZE];
        char address[16]; /* dotted IPv4, no prefix */
        uint32_t host;    /* the address in host order */
        int prefix;
        bool has_rdma; /* an RDMA port runs over its netdev */
};

struct job_node {
        char node_id[64];
        char name[64];
        bool is_self;
        bool is_stale;                 /* its summary is older than the view's stale limit */
        uint64_t age_s;                /* of its summary */
        char doctor[16];               /* "ok", "warning", "failed"; "" when not known */
        char doctor_why[256];          /* its failing checks, when it fails */
        bool has_addresses;            /* it published an addresses section */
        struct job_address management; /* address "" when it has no IPv4 default route */
        struct job_address fabric[JOB_NODE_MAX_ADDRESSES];
        size_t n_fabric;
        bool is_name_shared; /* the cluster table holds another node id by its name */
};

struct job_nodes {
        struct job_node *v;
        size_t n;
};

int job_nodes_add(struct job_nodes *nodes, const struct job_node *node);
void job_nodes_free(struct job_nodes *nodes);

/* A doctor result (this node's: status ok/warn/fail) or a doctor section (verdict
 * ok/warning/failed) read into n's doctor and, when it fails, its failing checks. */
void job_node_read_doctor(struct job_node *n, json_object *doctor);

/* An addresses section ({management: {ifname, address} | null, fabric: [{ifname, address:
 * "A.B.C.D/P", rdma}]}) read into n. What is not a valid IPv4 address, prefix or netdev name is
 * skipped, and a section without a fabric list leaves n without addresses. */
void job_node_read_addresses(struct job_node *n, json_object *addresses);

/* The cluster nodes' list ([{node_id, name, self, stale, age_s, doctor, addresses}], the doctor
 * and addresses sections or null) read into nodes; an entry without an id or a name is skipped. */
int job_nodes_add_cluster(struct job_nodes *nodes, json_object *list);
