#include "probe_kinds.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"

/* ---- rtt ---- */

static const struct probe_param_spec rtt_params[] = {
        { "count", 1, 100000, 1000, "--count", PROBE_SIDE_CLIENT },
        { "size", 1, 1 << 20, 64, "--size", PROBE_SIDE_CLIENT },
        { "interval_us", 0, 10000000, 0, "--interval-us", PROBE_SIDE_CLIENT },
        {},
};

static unsigned rtt_measure_sec(json_object *params)
{
        const struct probe_kind *k = probe_kind_find("rtt");
        uint64_t count = probe_kind_param(k, params, "count");
        uint64_t interval_us = probe_kind_param(k, params, "interval_us");

        /* A millisecond per round trip is far more than any fabric link takes. */
        return (unsigned)(5 + count * (interval_us + 1000) / 1000000);
}

static double rtt_expectation(const struct sparkd_config *c)
{
        return c->probe_expect_rtt_us;
}

/* ---- tcp ---- */

static const struct probe_param_spec tcp_params[] = {
        { "duration_s", 1, 600, 5, "--duration", PROBE_SIDE_CLIENT },
        { "streams", 1, 64, 1, "--streams", PROBE_SIDE_CLIENT },
        { "size", 1024, 16 << 20, 128 << 10, "--size", PROBE_SIDE_CLIENT },
        /* 1: client -> server only; 0 (the default): the reverse direction too, for as long. */
        { "one_way", 0, 1, 0, "--one-way", PROBE_SIDE_CLIENT, .is_switch = true },
        {},
};

static unsigned duration_measure_sec(json_object *params)
{
        json_object *v;

        return json_object_object_get_ex(params, "duration_s", &v) ? (unsigned)json_object_get_int64(v) : 0;
}

static unsigned tcp_measure_sec(json_object *params)
{
        json_object *v;
        bool one_way = json_object_object_get_ex(params, "one_way", &v) && json_object_get_int64(v);

        return duration_measure_sec(params) * (one_way ? 1 : 2);
}

static double tcp_expectation(const struct sparkd_config *c)
{
        return c->probe_expect_tcp_gbps;
}

/* ---- nccl ---- */

static const char *const nccl_ops[] = { "all_reduce", "all_gather", NULL };
static const char *const env_modes[] = { "auto", "safe", "dmabuf", NULL };

static const struct probe_param_spec nccl_params[] = {
        /* Up to the largest GB10's memory: the memory guard decides what fits on the node. */
        { "min_bytes", 1024, 128ULL << 30, 1 << 20, "--min-bytes", PROBE_SIDE_BOTH },
        { "max_bytes", 1024, 128ULL << 30, 256 << 20, "--max-bytes", PROBE_SIDE_BOTH },
        { "step_factor", 2, 1024, 2, "--step-factor", PROBE_SIDE_BOTH },
        { "iters", 1, 10000, 20, "--iters", PROBE_SIDE_BOTH },
        { "warmup_iters", 0, 1000, 1, "--warmup-iters", PROBE_SIDE_BOTH },
        { "init_timeout_ms", 1, 600000, 30000, "--init-timeout-ms", PROBE_SIDE_BOTH },
        { "ops", .max = 2, .option = "--op", .sides = PROBE_SIDE_BOTH, .type = PROBE_PARAM_LIST,
          .def_string = "all_reduce,all_gather", .choices = nccl_ops, .what = "collective" },
        { "mode", .type = PROBE_PARAM_STRING, .def_string = "auto", .choices = env_modes,
          .what = "environment mode" },
        { "env", .max = 16, .type = PROBE_PARAM_LIST, .def_string = "", .check = probe_check_environment,
          .what = "NAME=VALUE", .is_environment = true },
        {},
};

/* The slowest transfer rate a healthy NCCL link is expected to beat (4 Gb/s, below TCP on any
 * fabric port): the deadline allows for it, so only a stalled probe meets the deadline. */
#define NCCL_FLOOR_BYTES_PER_SEC 500e6

static unsigned nccl_measure_sec(json_object *params)
{
        const struct probe_kind *k = probe_kind_find("nccl");
        uint64_t min = probe_kind_param(k, params, "min_bytes"),
                 max = probe_kind_param(k, params, "max_bytes");
        uint64_t factor = probe_kind_param(k, params, "step_factor");
        uint64_t rounds =
                probe_kind_param(k, params, "iters") + probe_kind_param(k, params, "warmup_iters") + 1;
        double per_round = 0, bytes = 0, checked = 0;
        json_object *ops = NULL;

        /* Per rank and round of 2 ranks, all_reduce moves its size, all_gather half of it. */
        json_object_object_get_ex(params, "ops", &ops);
        for (size_t i = 0; ops && i < json_object_array_length(ops); i++)
                per_round +=
                        strcmp(json_object_get_string(json_object_array_get_idx(ops, i)), "all_reduce") == 0
                                ? 1.0
                                : 0.5;
        for (uint64_t size = min; size <= max; size *= factor) {
                bytes += per_round * (double)size * (double)rounds;
                checked += (double)size; /* the result check reads it back at ~1 GB/s at worst */
                if (size > max / factor)
                        break;
        }
        return (unsigned)(probe_kind_param(k, params, "init_timeout_ms") / 1000 +
                          bytes / NCCL_FLOOR_BYTES_PER_SEC + checked * 2 / 1e9 + 1);
}

/* What sparkd-probe-nccl allocates (nccl_run.c): a host buffer of max_bytes for the pattern and
 * the check, and send and receive buffers of max_bytes each on the GPU. */
static uint64_t nccl_memory_needed(json_object *params, bool unified_memory)
{
        uint64_t max = probe_kind_param(probe_kind_find("nccl"), params, "max_bytes");

        return max + (unified_memory ? 2 * max : 0);
}

static double nccl_expectation(const struct sparkd_config *c)
{
        return c->probe_expect_nccl_busbw;
}

static int nccl_check_params(json_object *params, char *err, size_t err_size)
{
        const struct probe_kind *k = probe_kind_find("nccl");

        if (probe_kind_param(k, params, "min_bytes") > probe_kind_param(k, params, "max_bytes")) {
                snprintf(err, err_size, "the nccl probe's min_bytes is above its max_bytes");
                return -EINVAL;
        }
        return 0;
}

/* ---- rdma ---- */

/* auto (the GID of the address, found in the table) or an index of the GID table. */
static int check_gid_index(const char *value, char *err, size_t err_size)
{
        char *end;
        unsigned long v;

        if (strcmp(value, "auto") == 0)
                return 0;
        v = strtoul(value, &end, 10);
        if (value[0] < '0' || value[0] > '9' || *end || v > 65535) {
                snprintf(err, err_size,
                         "the rdma probe's gid_index is '%.32s': expected auto or a GID index "
                         "from 0 to 65535",
                         value);
                return -EINVAL;
        }
        return 0;
}

static const struct probe_param_spec rdma_params[] = {
        { "duration_s", 1, 600, 5, "--duration", PROBE_SIDE_CLIENT },
        { "qps", 1, 16, 4, "--qps", PROBE_SIDE_CLIENT },
        { "size", 1, 8 << 20, 64 << 10, "--size", PROBE_SIDE_CLIENT },
        /* Both sides write (the server in the reverse direction) with the same pacing. */
        { "tx_depth", 1, 1024, 128, "--tx-depth", PROBE_SIDE_BOTH },
        { "cq_mod", 1, 1024, 100, "--cq-mod", PROBE_SIDE_BOTH },
        { "lat_iters", 3, 1000000, 1000, "--lat-iters", PROBE_SIDE_CLIENT },
        { "lat_size", 1, 4096, 2, "--lat-size", PROBE_SIDE_CLIENT },
        { "one_way", 0, 1, 0, "--one-way", PROBE_SIDE_CLIENT, .is_switch = true },
        /* Each side's index in its own GID table: the same hardware numbers its tables alike. */
        { "gid_index", .option = "--gid-index", .sides = PROBE_SIDE_BOTH, .type = PROBE_PARAM_STRING,
          .def_string = "auto", .check = check_gid_index, .what = "GID index (auto or a number)" },
        {},
};

static unsigned rdma_measure_sec(json_object *params)
{
        const struct probe_kind *k = probe_kind_find("rdma");

        /* Both directions, then round trips well under a millisecond each on any RoCE link. */
        return tcp_measure_sec(params) + (unsigned)(probe_kind_param(k, params, "lat_iters") / 1000) + 1;
}

/* The RDMA buffers sparkd-probe-rdma registers (pinned host memory, on either kind of GPU): per
 * queue pair on each rail (both twins of a port at most, RDMA_RAILS_MAX in probes/rdma_params.h)
 * an inbox and an outbox of max(size, lat_size) rounded up to pages, and a page of control
 * messages. */
#define RDMA_PROBE_RAILS_MAX 2

static uint64_t rdma_memory_needed(json_object *params, bool unified_memory)
{
        const struct probe_kind *k = probe_kind_find("rdma");
        uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), size = probe_kind_param(k, params, "size"),
                 lat_size = probe_kind_param(k, params, "lat_size");
        uint64_t half = size > lat_size ? size : lat_size;

        half = (half + page - 1) / page * page;
        return RDMA_PROBE_RAILS_MAX * probe_kind_param(k, params, "qps") * 2 * half + page;
}

static double rdma_expectation(const struct sparkd_config *c)
{
        return c->probe_expect_rdma_gbps;
}

static int rdma_check_params(json_object *params, char *err, size_t err_size)
{
        const struct probe_kind *k = probe_kind_find("rdma");

        if (probe_kind_param(k, params, "cq_mod") > probe_kind_param(k, params, "tx_depth")) {
                snprintf(err, err_size,
                         "the rdma probe's cq_mod is above its tx_depth: no write would be signalled");
                return -EINVAL;
        }
        return 0;
}

/* ---- pathmtu ---- */

static const struct probe_param_spec pathmtu_params[] = {
        { "timeout_ms", 10, 10000, 300, "--timeout-ms", PROBE_SIDE_CLIENT },
        { "tries", 1, 10, 3, "--tries", PROBE_SIDE_CLIENT },
        {},
};

/* The helper's search: the full size, then a binary search down to 68 bytes, at most 17 sizes
 * for the largest MTU; a size that gets no answer costs every try's timeout. */
#define PATHMTU_MAX_SIZES 17

static unsigned pathmtu_measure_sec(json_object *params)
{
        const struct probe_kind *k = probe_kind_find("pathmtu");

        return (unsigned)(1 + PATHMTU_MAX_SIZES * probe_kind_param(k, params, "tries") *
                                      probe_kind_param(k, params, "timeout_ms") / 1000);
}

static const struct probe_kind kinds[] = {
        {
                .name = "rtt",
                .helper = "sparkd-probe-rtt",
                .summary = "TCP round trips: min/median/p99/max in microseconds",
                .metric = "median_us",
                .unit = "us median",
                .params = rtt_params,
                .measure_sec = rtt_measure_sec,
                .configured_expectation = rtt_expectation,
        },
        {
                .name = "tcp",
                .helper = "sparkd-probe-tcp",
                .summary = "TCP throughput in Gb/s both ways, per rail, with retransmits",
                .is_bandwidth = true,
                .metric = "gbps",
                .unit = "Gb/s",
                .higher_is_better = true,
                .params = tcp_params,
                .measure_sec = tcp_measure_sec,
                .configured_expectation = tcp_expectation,
        },
        {
                .name = "nccl",
                .helper = "sparkd-probe-nccl",
                .summary = "NCCL all_reduce/all_gather bus bandwidth in GB/s, as nccl-tests reports it",
                .is_bandwidth = true,
                .metric = "busbw_gbytes",
                .unit = "GB/s busbw",
                .higher_is_better = true,
                .params = nccl_params,
                .measure_sec = nccl_measure_sec,
                /* CUDA start-up and buffers on this side, then waiting for the peer's. */
                .setup_sec = 60,
                .configured_expectation = nccl_expectation,
                .env_mode_param = "mode",
                .check_params = nccl_check_params,
                .memory_needed = nccl_memory_needed,
        },
        {
                .name = "rdma",
                .helper = "sparkd-probe-rdma",
                .summary = "RDMA WRITE Gb/s both ways on both twins of the port, and write latency",
                .is_bandwidth = true,
                .metric = "gbps",
                .unit = "Gb/s",
                .higher_is_better = true,
                .params = rdma_params,
                .measure_sec = rdma_measure_sec,
                /* RDMA CM address and route resolution and a connect per queue pair. */
                .setup_sec = 15,
                .configured_expectation = rdma_expectation,
                .result_expectation = "expected_gbps",
                .check_params = rdma_check_params,
                .memory_needed = rdma_memory_needed,
                .twins_option = "--twins",
        },
        {
                .name = "pathmtu",
                .helper = "sparkd-probe-pathmtu",
                .summary = "the largest UDP payload that crosses the path with don't-fragment; fails "
                           "below the MTU - 28",
                .metric = "largest_payload",
                .unit = "bytes of payload",
                .higher_is_better = true,
                .params = pathmtu_params,
                .measure_sec = pathmtu_measure_sec,
        },
};

const struct probe_kind *probe_kind_at(size_t i)
{
        return i < ARRAY_SIZE(kinds) ? &kinds[i] : NULL;
}

_Static_assert(ARRAY_SIZE(kinds) <= PROBE_KINDS_MAX, "PROBE_KINDS_MAX is too small");

size_t probe_kind_index(const struct probe_kind *kind)
{
        return (size_t)(kind - kinds);
}

const struct probe_kind *probe_kind_find(const char *name)
{
        for (size_t i = 0; name && i < ARRAY_SIZE(kinds); i++)
                if (strcmp(kinds[i].name, name) == 0)
                        return &kinds[i];
        return NULL;
}

void probe_kind_names(char *buf, size_t size)
{
        size_t used = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < ARRAY_SIZE(kinds) && used < size; i++) {
                int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", kinds[i].name);

                if (n < 0)
                        break;
                used += (size_t)n;
        }
}
