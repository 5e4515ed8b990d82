/*
 * What the job methods read: the job plan (job_plan.h) from the cluster view's nodes, this node's
 * addresses as it publishes them, and an env-check request turned into env_check's input (the caller's
 * variables, its memlock limit, its NCCL config file as it sent it, and /etc/nccl.conf read here).
 */
#pragma once

#include <json-c/json.h>
#include <net/if.h>

#include "daemon/host/mgmt_address.h"
#include "env_check.h"
#include "fabric_api.h"

/* The plan (job_plan.h) from the cluster view's nodes (the context's cluster_nodes), or, where
 * no view is known, from this node alone with its doctor run on the facts f. NULL without
 * memory. */
json_object *job_api_plan(const struct fabric_api_context *ctx, const struct fabric_facts *f);

/* This node's addresses section of the cluster view: {management: {ifname, address:
 * "A.B.C.D/P"} | null, fabric: [{ifname, address: "A.B.C.D/P", rdma}]}, the fabric netdevs' IPv4
 * addresses, rdma when an active RDMA port runs over the netdev. */
json_object *job_api_addresses(const struct fabric_facts *f, const struct mgmt_address *management);

/* The env-check request's params into in: 0, or -EINVAL with why (a member, what was expected,
 * the limit) for an answer of invalid params. */
int job_api_env_check_input(const struct fabric_api_context *ctx, json_object *params,
                            struct env_check_input *in, char *why, size_t size);
