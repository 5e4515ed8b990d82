/*
 * What sparkd-probe-nccl works out without CUDA or NCCL, kept apart so unit tests run it on any
 * machine: the sizes a run covers, the element counts of each collective, nccl-tests' bandwidth
 * formulas, the data pattern and the check of results, the reading of NCCL's INFO log into the
 * transport NCCL really used, and the diagnosis of a hang.
 *
 * Bandwidth as nccl-tests (src/common.cu, all_reduce.cu, all_gather.cu) defines it: the size of a
 * collective is the bytes of its output buffer on one rank; algbw = size / time per iteration in
 * GB/s (1e9 bytes); busbw = algbw * 2(n-1)/n for all_reduce and algbw * (n-1)/n for all_gather,
 * the rate the busiest link of a ring had to carry, comparable across rank counts.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum nccl_op {
        NCCL_OP_ALL_REDUCE,
        NCCL_OP_ALL_GATHER,
        NCCL_OP_COUNT,
};

#define NCCL_MAX_SIZES 64

const char *nccl_op_name(enum nccl_op op);
int nccl_op_from_name(const char *name, enum nccl_op *out);

/* The sizes from min to max, each factor times the one before (nccl-tests' -b, -e, -f): at most
 * max_sizes of them into out; returns how many. */
size_t nccl_sizes(uint64_t min, uint64_t max, uint64_t factor, uint64_t *out, size_t max_sizes);

/* One collective at one size, in floats: what each rank sends and receives, and the size that
 * counts for bandwidth (the output buffer). all_gather's per-rank part is rounded down to whole
 * 16 bytes, as nccl-tests does; a size too small for that has bytes 0. */
struct nccl_counts {
        size_t send_count;
        size_t recv_count;
        uint64_t bytes;
};
void nccl_counts(enum nccl_op op, uint64_t size, int nranks, struct nccl_counts *out);

/* GB/s, 0 when no time passed. */
double nccl_algbw(uint64_t bytes, double seconds);
double nccl_busbw(enum nccl_op op, double algbw, int nranks);

/* Rank r's input element i: small whole numbers, so a sum over any number of ranks, in any order,
 * is exact in float and the check needs no tolerance. */
float nccl_pattern(size_t i, int rank);
/* The output element i of op on every rank. */
float nccl_expected(enum nccl_op op, size_t i, size_t send_count, int nranks);

struct nccl_mismatch {
        size_t wrong; /* elements that differ */
        size_t first; /* the first of them */
        float got, expected;
};
/* Checks an output buffer of recv_count elements; returns true when every element is right. */
bool nccl_check(enum nccl_op op, const float *out, size_t recv_count, size_t send_count, int nranks,
                struct nccl_mismatch *mismatch);

/* ---- NCCL's INFO log (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET) ---- */

struct nccl_transport {
        char network[32];         /* "Using network X": "IB", "Socket", a plugin's name; "" unseen */
        char ib_devices[256];     /* "NET/IB : Using [0]mlx5_0:1/RoCE ...": "mlx5_0:1/RoCE ..." */
        char socket_devices[256]; /* "NET/Socket : Using [0]eth0:10.0.0.1<0>": "eth0:10.0.0.1<0>" */
        bool ib_no_device;        /* "NET/IB : No device found." */
        unsigned gdr_enabled_hcas, gdr_disabled_hcas; /* "GPU Direct RDMA Enabled/Disabled for HCA" */
        bool gdr_used;                                /* a channel went "via NET/.../GDRDMA" */
        char paths[128];        /* the channels' transports, distinct: "NET/Socket,P2P" */
        unsigned channels;      /* channel connections seen */
        char last_warning[256]; /* the last NCCL WARN message */
};

/* Reads one log line ("host:pid:tid [dev] NCCL INFO ..."); other lines are ignored. */
void nccl_transport_parse_line(struct nccl_transport *t, const char *line);
/* True when NCCL moved data over TCP sockets although rdma_devices (a comma-separated list of
 * this node's active RDMA devices, "" for none) says the node has RDMA. */
bool nccl_transport_socket_fallback(const struct nccl_transport *t, const char *rdma_devices);
json_object *nccl_transport_to_json(const struct nccl_transport *t, const char *rdma_devices);

/* ---- hangs ---- */

/* Whether this environment lets NCCL use GPU Direct RDMA: NCCL_NET_GDR_LEVEL other than LOC or 0
 * (unset: NCCL decides from the topology, and does use it where the NIC is close). */
bool nccl_env_allows_gdr(const char *gdr_level);

struct nccl_hang {
        const char *call;  /* "ncclCommInitRank" */
        const char *phase; /* "comm_init" */
        double waited_sec;
        bool unified_memory;                    /* the node's GPU shares memory with the CPU (GB10) */
        const char *gdr_level;                  /* NCCL_NET_GDR_LEVEL, NULL when unset */
        const char *dmabuf_enable;              /* NCCL_DMABUF_ENABLE, NULL when unset */
        const struct nccl_transport *transport; /* what the log said before the hang */
};
/* The error line ("hang in ncclCommInitRank: ...") and {hang_in, phase, waited_s, cause, fix}:
 * on a unified-memory GPU with GPU Direct RDMA allowed, the cause is memory registration through
 * nvidia_peermem and the fix safe mode. */
json_object *nccl_hang_diagnose(const struct nccl_hang *h, char *error, size_t error_size);
