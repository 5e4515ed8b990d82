/*
 * The job plan in the files the launchers read: what sparkc export writes, what sparkd keeps
 * current ([export] directory) and what the gate (sparkc env --check --for sparkrun|svd FILE)
 * compares a file with. Pure: the plan (job-nodes) and this node's env (env --for torchrun) in,
 * text out, so sparkc and sparkd write the same bytes and the golden tests render exactly them.
 *
 * The formats, as the launchers' own readers take them:
 * - sparkrun (~/.config/sparkrun/clusters/NAME.yaml, read with yaml.safe_load): name (letters,
 *   digits, '_' and '-', a letter or digit first), hosts (hosts[0] the head), description,
 *   transfer_interface (cx7 or mgmt), topology (switch, or ring: its ring set-up and NCCL
 *   overrides are for three nodes only). It reads no other key: no per-node interface or NCCL
 *   variable goes there.
 * - spark-vllm-docker (KEY=VALUE for launch-cluster.sh --config FILE): CLUSTER_NODES
 *   (comma-separated, LOCAL_IP among them), LOCAL_IP, ETH_IF (one netdev for every rank), IB_IF
 *   (comma-separated RDMA devices), MASTER_PORT, CONTAINER_<VAR> (VAR in the container). On a
 *   ring of four or more, where opposite nodes share no cable, its cluster_topology.py also reads
 *   CLUSTER_LINKS: a JSON list with one object per cable and twin, mapping each end's node (its
 *   CLUSTER_NODES address) to that end's fabric IPv4 address; CLUSTER_NODES then goes round the
 *   ring in cable order, LOCAL_IP first, and every node of the ring must be in it.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

#define LAUNCHER_MAX_NODES     64
#define LAUNCHER_MAX_VARIABLES 64
/* sparkrun's cluster names: letters, digits, '_' and '-', a letter or digit first. */
#define LAUNCHER_SPARKRUN_NAME_MAX 64

enum launcher_format { LAUNCHER_SPARKRUN, LAUNCHER_SVD };

struct launcher_node {
        char name[64], node_id[40], address[16], ifname[16];
        bool is_self;
};

/* One cable's twin between two members (indices into nodes), with each end's fabric address. */
struct launcher_link {
        size_t a, b;
        char a_address[16], b_address[16];
};

#define LAUNCHER_MAX_LINKS (4 * LAUNCHER_MAX_NODES)

struct launcher_variable {
        char name[64], value[256];
};

/* What the formats take from the plan (job-nodes) and this node's env (env --for torchrun). */
struct launcher_plan {
        char digest[24], plane[16], shape[16], error[256];
        int shape_nodes;
        size_t n_nodes, n_variables;
        struct launcher_node nodes[LAUNCHER_MAX_NODES]; /* rank order: the head first */
        struct launcher_variable variables[LAUNCHER_MAX_VARIABLES];
        char ib_if[256], master_port[8];
        int self_rank;  /* -1: this node is no member */
        size_t n_links; /* from the cabling map (launcher_plan_read_map) */
        struct launcher_link links[LAUNCHER_MAX_LINKS];
};

bool launcher_sparkrun_name_ok(const char *s);
int launcher_format_from_string(const char *s, enum launcher_format *out);
/* Reads and checks the replies; env may be NULL (no fabric). -EINVAL with why. */
int launcher_plan_read(json_object *plan, json_object *env, struct launcher_plan *p, char *why, size_t size);
/* Adds the cabling map's (topology's) links between members, with their addresses: what
 * CLUSTER_LINKS holds on a ring of four or more. -EINVAL with why on a map not as sparkd writes
 * it. */
int launcher_plan_read_map(json_object *topology, struct launcher_plan *p, char *why, size_t size);
/* Each writes the file, or gives -EINVAL with why when the format cannot hold the plan. */
int launcher_write_sparkrun(FILE *out, const struct launcher_plan *p, const char *name, char *why,
                            size_t size);
int launcher_write_svd(FILE *out, const struct launcher_plan *p, char *why, size_t size);
