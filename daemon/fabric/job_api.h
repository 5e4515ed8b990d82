/*
 * What the job methods read: the job plan (job_nodes.h) from the facts, the peers and the nodes'
 * doctors, and an env-check request turned into env_check's input (the caller's variables, its
 * memlock limit, its NCCL config file as it sent it, and /etc/nccl.conf read here).
 */
#pragma once

#include <json-c/json.h>
#include <net/if.h>

#include "env_check.h"
#include "fabric_api.h"

/* The plan from facts read now (their peers filled in), with this node's doctor run on them; this
 * node's fabric address and its netdev in own and ifname ("" when none). */
json_object *job_api_plan(const struct fabric_api_context *ctx, const struct fabric_facts *f, char own[64],
                          char ifname[IF_NAMESIZE]);

/* The env-check request's params into in: 0, or -EINVAL with why (a member, what was expected,
 * the limit) for an answer of invalid params. */
int job_api_env_check_input(const struct fabric_api_context *ctx, json_object *params,
                            struct env_check_input *in, char *why, size_t size);
