/*
 * What a framework needs on top of `sparkc env` to stay on the fabric across nodes: the address
 * it announces as this node's (vLLM, SGLang, Ray), the rendezvous endpoint and this node's rank,
 * which every node computes the same way from the job plan (job_nodes.h) without asking the
 * others, and Open MPI's out-of-band channel on the fabric netdevs. Pure.
 */
#pragma once

#include <json-c/json.h>

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
 * (job_plan_build's) and this node's own fabric address, and "for", "rank", "nnodes" and "head".
 * Returns 0, or -ENODATA with env's "for_refused" saying why when they cannot be given: no
 * rendezvous, this node left out of the plan, or no fabric address of its own.
 */
int envgen_add_framework(json_object *env, enum env_framework framework, json_object *plan,
                         const char *own_address, const char *own_ifname);
