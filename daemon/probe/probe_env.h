/*
 * The environment a probe helper that runs NCCL starts with, so that the probe measures what
 * users run: the variables `sparkc env --mode MODE` gives on this node (envgen.c), then
 * NCCL_SOCKET_IFNAME pinned to the interface that holds the probe's local address (NCCL's
 * bootstrap and socket transport then take the cable being probed), then what the helper needs
 * to know about the node to judge what NCCL did (SPARKD_PROBE_UNIFIED_MEMORY,
 * SPARKD_PROBE_RDMA_DEVICES), and last the request's own NAME=VALUE overrides. Pure: the same
 * facts give the same environment.
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

#include "daemon/fabric/envgen.h"
#include "inventory/fabric.h"

#define PROBE_ENV_UNIFIED_MEMORY "SPARKD_PROBE_UNIFIED_MEMORY"
#define PROBE_ENV_RDMA_DEVICES   "SPARKD_PROBE_RDMA_DEVICES"

struct probe_env {
        char **entries;           /* "NAME=VALUE", NULL-terminated, for child_spawn */
        json_object *description; /* {mode, mode_reason, variables: [{name, value, source}]} */
};

/* local_address: the probe's address on this node ("" or NULL when not known). overrides:
 * checked NAME=VALUE items (probe_check_environment). */
int probe_env_build(const struct fabric_facts *facts, enum env_mode mode, const char *local_address,
                    const char *const *overrides, size_t n_overrides, struct probe_env *out);
void probe_env_free(struct probe_env *env);
/* The value of NAME in env's entries, NULL when not set. */
const char *probe_env_get(const struct probe_env *env, const char *name);
