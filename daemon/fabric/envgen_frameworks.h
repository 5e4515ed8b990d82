/*
 * What a framework needs on top of `sparkc env` to stay on the fabric across nodes: the address
 * it announces as this node's (vLLM, SGLang, Ray), the rendezvous endpoint and this node's rank,
 * which every node computes the same way from the job plan (job_plan.h) without asking the
 * others, and Open MPI's out-of-band channel on the fabric netdevs. Pure.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

enum env_framework {
        ENV_FRAMEWORK_TORCHRUN,
        ENV_FRAMEWORK_RAY,
        ENV_FRAMEWORK_VLLM,
        ENV_FRAMEWORK_SGLANG,
        ENV_FRAMEWORK_MPI,
};

int env_framework_from_string(const char *s, enum env_framework *out);
const char *env_framework_to_string(enum env_framework framework);
/* "torchrun, ray, vllm, sglang, mpi", for messages. */
const char *env_framework_names(void);

/*
 * Adds the framework's variables to env (envgen_build's result, with fabric found) from plan
 * (job_plan_build's: the head, this node's rank and its address on the plane), and "for",
 * "rank", "nnodes", "head" and "plan_digest", and the plan's digest and plane in the notes. On
 * the management plane NCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME and Open MPI's TCP go to this
 * node's management netdev (the bootstrap), the RDMA data staying on the fabric. Returns 0, or
 * -ENODATA with env's "for_refused" saying why when they cannot be given: no rendezvous, or this
 * node left out of the plan.
 */
int envgen_add_framework(json_object *env, enum env_framework framework, json_object *plan);

/* What `sparkc env` takes from the plan without a framework: "plan_digest", "left_out", and on
 * the management plane the bootstrap, Gloo and Open MPI's TCP on this node's management netdev;
 * with_note, the plan's digest, size, head and plane in the notes. */
void envgen_apply_plan(json_object *env, json_object *plan, bool with_note);
/* This node's management netdev when the plan's plane is the management network, else NULL. */
const char *envgen_plan_bootstrap_ifname(json_object *plan);
