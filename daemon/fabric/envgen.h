/*
 * The environment to run NCCL, UCX, MPI and Gloo jobs with on this node, derived from the
 * fabric facts: which RDMA devices (every active twin), which socket interface, which GID index,
 * and whether GPU Direct RDMA may be used ("safe": staged through host memory; "dmabuf": GPU
 * memory registered through DMA-BUF). Pure: the same facts give the same answer.
 */
#pragma once

#include <json-c/json.h>

#include "inventory/fabric.h"

enum env_mode {
        ENV_MODE_AUTO,
        ENV_MODE_SAFE,
        ENV_MODE_DMABUF,
};

int env_mode_from_string(const char *s, enum env_mode *out);
const char *env_mode_to_string(enum env_mode mode);

/* {fabric_found, reason?, mode, mode_requested, mode_reason, refused?: {reason, safe_command},
 *  variables: [{name, value, why}], notes: [..]}. "refused": the mode asked for would hang or fail
 *  NCCL here; the variables are those of the mode asked for all the same. */
json_object *envgen_build(const struct fabric_facts *facts, enum env_mode requested);
