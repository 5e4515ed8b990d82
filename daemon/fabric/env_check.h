/*
 * A job's environment judged against this node: the NCCL, UCX, Gloo, Open MPI, vLLM and SGLang
 * variables a job runs with (its own, and those NCCL takes from ~/.nccl.conf and /etc/nccl.conf),
 * and the job's memlock limit, against the fabric facts. Each finding names the variable, where
 * its value came from, what is wrong with it here and the fix. Pure: the same facts and settings
 * give the same findings.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "env_settings.h"
#include "inventory/fabric.h"

struct env_check_input {
        struct env_settings environ; /* the job's own variables */
        /* Lines of NCCL's config files in the order NCCL reads them (the caller's file first, then
         * /etc/nccl.conf): NCCL takes a line only for a variable not set yet, so the first wins and
         * the environment wins over both. */
        struct env_settings files;
        bool has_memlock;
        uint64_t memlock_soft, memlock_hard; /* bytes, HOSTFACTS_UNLIMITED for unlimited */
};

/* {status: "ok" | "warn" | "fail", checked: N, findings: [{severity: "warning" | "error",
 *  variable, value, source, problem, fix}]}. */
json_object *env_check_run(const struct fabric_facts *facts, const struct env_check_input *input);
