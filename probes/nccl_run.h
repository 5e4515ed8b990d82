/*
 * The measuring part of sparkd-probe-nccl (nccl.c parses the command line): CUDA start-up,
 * buffers, the communicator, the collectives at each size, the result. Every wait polls, so each
 * phase has its own deadline and a hang is reported as one rather than outliving the process.
 */
#pragma once

#include <cuda_runtime_api.h>
#include <limits.h>
#include <nccl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "nccl_report.h"
#include "probe_cmdline.h"

#define NCCL_ID_ENV    "SPARKD_PROBE_NCCL_ID"
#define UNIFIED_ENV    "SPARKD_PROBE_UNIFIED_MEMORY"
#define RDMA_ENV       "SPARKD_PROBE_RDMA_DEVICES"
#define NCCL_RANKS_MAX 64
#define NCCL_BYTES_MAX (128ULL << 30)

struct nccl_options {
        struct probe_args args; /* --client is a name: remote_arg */
        int rank, nranks;
        int device;
        uint64_t min_bytes, max_bytes, step_factor;
        unsigned iters, warmup_iters;
        bool ops[NCCL_OP_COUNT];
        uint64_t init_timeout_ms;
        bool id_stdin; /* a client reads the unique id from stdin once its GPU is ready */
};

struct nccl_run {
        struct nccl_options o;
        char log_path[PATH_MAX];
        const char *phase;
        cudaStream_t stream;
        cudaEvent_t start, stop;
        void *send, *recv; /* on the GPU, max_bytes each */
        float *host;       /* max_bytes, for fills and checks */
        ncclComm_t comm;
        struct nccl_transport transport;
        unsigned log_lines;
        double ms[8]; /* by enum nccl_phase_slot */
        json_object *ops;
        double busbw, algbw; /* the judged number: all_reduce (else all_gather) at the largest size */
        uint64_t busbw_bytes;
        char wrong[256]; /* the first wrong result, "" when all were right */
        /* A client's unique id that comes after CUDA and the buffers are ready (phase "unique_id"):
         * waits for it until the absolute time until (probe_now's clock); -errno with why. */
        int (*wait_id)(ncclUniqueId *id, double until, char *err, size_t size);
        ncclUniqueId given_id;
};

/* Runs this rank; id is NULL on the server, which makes one. Prints the result; returns the exit
 * status. */
int nccl_run(struct nccl_run *run, const ncclUniqueId *id);
