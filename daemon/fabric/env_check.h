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

#define ENV_CHECK_MAX_ROUTES 4

struct env_check_input {
        struct env_settings environ; /* the job's own variables */
        /* Lines of NCCL's config files in the order NCCL reads them (the caller's file first, then
         * /etc/nccl.conf): NCCL takes a line only for a variable not set yet, so the first wins and
         * the environment wins over both. */
        struct env_settings files;
        bool has_memlock;
        uint64_t memlock_soft, memlock_hard; /* bytes, HOSTFACTS_UNLIMITED for unlimited */
        /* From the job plan: this node's address on its plane (the fix for VLLM_HOST_IP and
         * SGLANG_HOST_IP) and the rendezvous address; "" when not known. */
        char own_address[16];
        char rendezvous[16];
        /* This node's management netdev when the plan puts NCCL's bootstrap there, else "". */
        char bootstrap_ifname[16];
        /* The rendezvous variables (MASTER_ADDR, RAY_ADDRESS, DIST_INIT_ADDR) whose host is an
         * IPv4 address, each looked up in this node's routes by the caller: error 0 with the
         * source and netdev it leaves from, or the kernel's negative errno. */
        struct env_check_route {
                char name[32];
                char host[16];
                int error;
                char source[16];
                char ifname[16];
        } routes[ENV_CHECK_MAX_ROUTES];
        size_t n_routes;
};

/* {status: "ok" | "warn" | "fail", checked: N, findings: [{severity: "warning" | "error",
 *  variable, value, source, problem, fix}]}. */
json_object *env_check_run(const struct fabric_facts *facts, const struct env_check_input *input);
