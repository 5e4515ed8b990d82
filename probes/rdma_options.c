/* sparkd-probe-rdma's command line and --help. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "probe_common.h"
#include "rdma_params.h"

static void usage(void)
{
        printf("Usage: " RDMA_PROBE_PROG " --server --bind ADDR [--port PORT] [OPTIONS]\n"
               "       " RDMA_PROBE_PROG " --client ADDR [--port PORT] [--bind ADDR] [OPTIONS]\n"
               "\n"
               "RDMA WRITE bandwidth and latency between two nodes over RoCE, in the manner of perftest's\n"
               "ib_write_bw -q 4 -R and ib_write_lat -R, on every RDMA device of the fabric port at once:\n"
               "the device whose RoCE v2 GID holds the --bind address and its twin (the port's other PCIe\n"
               "function), each with its own queue pairs. The server serves one client session and exits.\n"
               "\n"
               "  -s, --server           wait for one client session\n"
               "  -c, --client ADDR      connect to the server at IPv4 address ADDR\n"
               "  -B, --bind ADDR        the local fabric address; it picks the RDMA devices (server:\n"
               "                         required; client: default the address the route to ADDR uses)\n"
               "  -p, --port PORT        RDMA CM port (server default 0: any free port; client default "
               "18515)\n"
               "  -q, --qps N            RC queue pairs per RDMA device, 1..%d (default 4)\n"
               "  -l, --size BYTES       bandwidth message size, K/M suffixes (default 64K)\n"
               "  -t, --tx-depth N       outstanding writes per queue pair, 1..%d (default 128)\n"
               "  -Q, --cq-mod N         one signalled write in N, 1..tx-depth (default 100)\n"
               "  -D, --duration SEC     seconds of writes per direction (default 5)\n"
               "  -n, --iters N          writes per queue pair instead of a duration\n"
               "      --one-way          bandwidth client -> server only (default: then server -> client)\n"
               "      --bandwidth        bandwidth only; --latency: latency only (default: both)\n"
               "      --lat-iters N      ping-pong round trips (default 1000)\n"
               "      --lat-size BYTES   ping-pong message size, 1..4096 (default 2)\n"
               "      --one-rail         the device holding the address only, not its twin\n"
               "      --twins DEV,DEV    the two RDMA devices of the port, used together when the --bind\n"
               "                         address is on one of them; for devices the PCI addresses do not\n"
               "                         pair (default: a Spark port's two PCIe functions)\n"
               "      --gid-index N      the GID index of the --bind address's device, 0..%d; it must be\n"
               "                         the RoCE v2 GID of that address (default auto: found by address)\n"
               "      --deadline SEC     give up with a timeout result after SEC seconds (default 60)\n"
               "      --json             JSON lines even on a terminal\n"
               "  -h, --help             this text\n"
               "      --version          the version\n"
               "\n"
               "Authentication: when " PROBE_TOKEN_ENV
               " is set (32 characters), the client sends it in the\n"
               "private data of every RDMA CM connect and the server refuses connections without it;\n"
               "unset (use by hand), none is needed.\n"
               "\n"
               "Output: a table on a terminal, else JSON lines: progress {\"phase\":...} and one final\n"
               "{\"result\":{...}}. Gb/s are decimal (1e9 bits) over the time from the first write posted\n"
               "to the last completion, per device (\"rails\") and for the port; latency is half the round\n"
               "trip, as ib_write_lat prints it. Without an RDMA device it fails at once with\n"
               "\"unavailable\": true. Memory is registered within the memlock limit (ulimit -l). Exit\n"
               "status: 0 success, 1 failure or timeout, 2 bad command line.\n",
               RDMA_QPS_MAX, RDMA_TX_DEPTH_MAX, RDMA_GID_INDEX_MAX);
}

/* --gid-index auto or a number. */
static int gid_index_read(const char *arg, void *own, char *err, size_t err_size)
{
        struct rdma_options *o = own;
        uint64_t v;

        if (strcmp(arg, "auto") == 0) {
                o->gid_index = -1;
                return 0;
        }
        if (probe_opt_uint("--gid-index", arg, 0, RDMA_GID_INDEX_MAX, &v, err, err_size) < 0) {
                snprintf(err, err_size, "--gid-index '%s': expected auto or a GID index from 0 to %d", arg,
                         RDMA_GID_INDEX_MAX);
                return -EINVAL;
        }
        o->gid_index = (int)v;
        return 0;
}

#define OWN(member) PROBE_FIELD(struct rdma_options, member)
static const struct probe_opt rdma_options[] = {
        PROBE_OPT_SERVER,
        PROBE_OPT_CLIENT_ADDR,
        PROBE_OPT_BIND,
        PROBE_OPT_PORT_NUMBER,
        { "qps", 'q', PROBE_ARG_UINT, OWN(qps), 1, RDMA_QPS_MAX, PROBE_OPT_CLIENT_ONLY },
        { "size", 'l', PROBE_ARG_SIZE, OWN(size), 1, RDMA_SIZE_MAX, PROBE_OPT_CLIENT_ONLY },
        { "tx-depth", 't', PROBE_ARG_UINT, OWN(tx_depth), 1, RDMA_TX_DEPTH_MAX },
        { "cq-mod", 'Q', PROBE_ARG_UINT, OWN(cq_mod), 1, RDMA_TX_DEPTH_MAX },
        { "duration", 'D', PROBE_ARG_SECONDS, OWN(duration), 0.1, 3600, PROBE_OPT_CLIENT_ONLY },
        { "iters", 'n', PROBE_ARG_UINT, OWN(iters), 1, 1ULL << 32, PROBE_OPT_CLIENT_ONLY },
        { "one-way", 0, PROBE_ARG_FLAG, OWN(is_one_way), 0, 0, PROBE_OPT_CLIENT_ONLY },
        { "bandwidth", 0, PROBE_ARG_FLAG, OWN(want_bandwidth), 0, 0, PROBE_OPT_CLIENT_ONLY },
        { "latency", 0, PROBE_ARG_FLAG, OWN(want_latency), 0, 0, PROBE_OPT_CLIENT_ONLY },
        { "lat-iters", 0, PROBE_ARG_UINT, OWN(lat_iters), 3, RDMA_LAT_ITERS_MAX, PROBE_OPT_CLIENT_ONLY },
        { "lat-size", 0, PROBE_ARG_SIZE, OWN(lat_size), 1, 4096, PROBE_OPT_CLIENT_ONLY },
        { "one-rail", 0, PROBE_ARG_FLAG, OWN(is_one_rail) },
        { "twins", 0, PROBE_ARG_TEXT, OWN(twins) },
        { .name = "gid-index", .arg = PROBE_ARG_CALL, .read = gid_index_read },
        PROBE_OPT_DEADLINE(0.1),
        {},
};

/* The checks between options, after the shared ones; the server's port and the defaults that
 * depend on other options. */
static int options_check(struct probe_args *args, void *own, char *err, size_t err_size)
{
        struct rdma_options *o = own;

        if (args->is_server && !args->has_bind) {
                snprintf(err, err_size,
                         "the server needs --bind ADDR, its fabric address: it picks the RDMA "
                         "devices");
                return -EINVAL;
        }
        if (args->is_server && !args->has_port)
                args->port = 0;
        if (o->cq_mod > o->tx_depth) {
                snprintf(err, err_size,
                         "--cq-mod %u is above --tx-depth %u: no write would ever be signalled", o->cq_mod,
                         o->tx_depth);
                return -EINVAL;
        }
        if (!o->want_bandwidth && !o->want_latency)
                o->want_bandwidth = o->want_latency = true;
        o->max_rails = o->is_one_rail ? 1 : RDMA_RAILS_MAX;
        return 0;
}

const struct probe_cmdline rdma_cmdline = {
        .prog = RDMA_PROBE_PROG,
        .opts = rdma_options,
        .client_only_error =
                "--qps, --size, --duration, --iters, --one-way, --bandwidth, --latency and --lat-* "
                "are for the client: it tells the server",
        .usage = usage,
        .check = options_check,
};

const struct rdma_options rdma_options_defaults = {
        .args = { .deadline = 60, .port = 18515 },
        .qps = 4,
        .size = 64 << 10,
        .tx_depth = 128,
        .cq_mod = 100,
        .duration = 5,
        .lat_iters = 1000,
        .lat_size = 2,
        .max_rails = RDMA_RAILS_MAX,
        .gid_index = -1,
};

int rdma_options_parse(int argc, char **argv, struct rdma_options *o, char *err, size_t err_size)
{
        *o = rdma_options_defaults;
        return probe_cmdline_parse(&rdma_cmdline, argc, argv, &o->args, o, err, err_size);
}
