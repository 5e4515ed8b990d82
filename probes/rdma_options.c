/* sparkd-probe-rdma's command line and --help. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "probe_common.h"
#include "rdma_params.h"

void rdma_options_usage(void)
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
               RDMA_QPS_MAX, RDMA_TX_DEPTH_MAX);
}

int rdma_options_parse(int argc, char **argv, struct rdma_options *o, char *err, size_t err_size)
{
        enum {
                OPT_DEADLINE = 256,
                OPT_JSON,
                OPT_VERSION,
                OPT_ONE_WAY,
                OPT_BANDWIDTH,
                OPT_LATENCY,
                OPT_LAT_ITERS,
                OPT_LAT_SIZE,
                OPT_ONE_RAIL,
        };
        static const struct option longopts[] = {
                { "server", no_argument, NULL, 's' },
                { "client", required_argument, NULL, 'c' },
                { "bind", required_argument, NULL, 'B' },
                { "port", required_argument, NULL, 'p' },
                { "qps", required_argument, NULL, 'q' },
                { "size", required_argument, NULL, 'l' },
                { "tx-depth", required_argument, NULL, 't' },
                { "cq-mod", required_argument, NULL, 'Q' },
                { "duration", required_argument, NULL, 'D' },
                { "iters", required_argument, NULL, 'n' },
                { "one-way", no_argument, NULL, OPT_ONE_WAY },
                { "bandwidth", no_argument, NULL, OPT_BANDWIDTH },
                { "latency", no_argument, NULL, OPT_LATENCY },
                { "lat-iters", required_argument, NULL, OPT_LAT_ITERS },
                { "lat-size", required_argument, NULL, OPT_LAT_SIZE },
                { "one-rail", no_argument, NULL, OPT_ONE_RAIL },
                { "deadline", required_argument, NULL, OPT_DEADLINE },
                { "json", no_argument, NULL, OPT_JSON },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                {},
        };
        bool is_client = false, has_port = false, has_client_options = false;
        uint64_t v;
        int c, r = 0;

        *o = (struct rdma_options){
                .qps = 4,
                .size = 64 << 10,
                .tx_depth = 128,
                .cq_mod = 100,
                .duration = 5,
                .lat_iters = 1000,
                .lat_size = 2,
                .max_rails = RDMA_RAILS_MAX,
                .deadline = 60,
                .port = 18515,
        };
        optind = 0;
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":sc:B:p:q:l:t:Q:D:n:h", longopts, NULL)) >= 0 && r == 0) {
                switch (c) {
                case 's':
                        o->is_server = true;
                        break;
                case 'c':
                        is_client = true;
                        o->remote_arg = optarg;
                        r = probe_opt_ipv4("--client", optarg, false, &o->remote, err, err_size);
                        break;
                case 'B':
                        r = probe_opt_ipv4("--bind", optarg, false, &o->bind, err, err_size);
                        o->has_bind = true;
                        break;
                case 'p':
                        r = probe_opt_uint("--port", optarg, 0, 65535, &v, err, err_size);
                        o->port = (uint16_t)v;
                        has_port = true;
                        break;
                case 'q':
                        r = probe_opt_uint("--qps", optarg, 1, RDMA_QPS_MAX, &v, err, err_size);
                        o->qps = (unsigned)v;
                        has_client_options = true;
                        break;
                case 'l':
                        r = probe_opt_size("--size", optarg, 1, RDMA_SIZE_MAX, &o->size, err, err_size);
                        has_client_options = true;
                        break;
                case 't':
                        r = probe_opt_uint("--tx-depth", optarg, 1, RDMA_TX_DEPTH_MAX, &v, err, err_size);
                        o->tx_depth = (unsigned)v;
                        break;
                case 'Q':
                        r = probe_opt_uint("--cq-mod", optarg, 1, RDMA_TX_DEPTH_MAX, &v, err, err_size);
                        o->cq_mod = (unsigned)v;
                        break;
                case 'D':
                        r = probe_opt_seconds("--duration", optarg, 0.1, 3600, &o->duration, err, err_size);
                        has_client_options = true;
                        break;
                case 'n':
                        r = probe_opt_uint("--iters", optarg, 1, 1ULL << 32, &o->iters, err, err_size);
                        has_client_options = true;
                        break;
                case OPT_ONE_WAY:
                        o->is_one_way = true;
                        has_client_options = true;
                        break;
                case OPT_BANDWIDTH:
                        o->want_bandwidth = true;
                        has_client_options = true;
                        break;
                case OPT_LATENCY:
                        o->want_latency = true;
                        has_client_options = true;
                        break;
                case OPT_LAT_ITERS:
                        r = probe_opt_uint("--lat-iters", optarg, 3, RDMA_LAT_ITERS_MAX, &v, err, err_size);
                        o->lat_iters = (unsigned)v;
                        has_client_options = true;
                        break;
                case OPT_LAT_SIZE:
                        r = probe_opt_size("--lat-size", optarg, 1, 4096, &v, err, err_size);
                        o->lat_size = (unsigned)v;
                        has_client_options = true;
                        break;
                case OPT_ONE_RAIL:
                        o->max_rails = 1;
                        break;
                case OPT_DEADLINE:
                        r = probe_opt_seconds("--deadline", optarg, 0.1, 86400, &o->deadline, err, err_size);
                        break;
                case OPT_JSON:
                        o->is_json = true;
                        break;
                case 'h':
                        o->want_help = true;
                        return 0;
                case OPT_VERSION:
                        o->want_version = true;
                        return 0;
                case ':':
                        snprintf(err, err_size, "%s needs a value", argv[optind - 1]);
                        return -EINVAL;
                default:
                        snprintf(err, err_size, "unknown option %s", argv[optind - 1]);
                        return -EINVAL;
                }
        }
        if (r < 0)
                return -EINVAL;
        if (optind < argc) {
                snprintf(err, err_size, "unexpected argument '%s'", argv[optind]);
                return -EINVAL;
        }
        if (o->is_server == is_client) {
                snprintf(err, err_size, "give either --server or --client ADDR");
                return -EINVAL;
        }
        if (o->is_server && has_client_options) {
                snprintf(err, err_size,
                         "--qps, --size, --duration, --iters, --one-way, --bandwidth, --latency and --lat-* "
                         "are for the client: it tells the server");
                return -EINVAL;
        }
        if (o->is_server && !o->has_bind) {
                snprintf(err, err_size,
                         "the server needs --bind ADDR, its fabric address: it picks the RDMA "
                         "devices");
                return -EINVAL;
        }
        if (o->is_server && !has_port)
                o->port = 0;
        if (is_client && o->port == 0) {
                snprintf(err, err_size, "the client needs the server's --port (1..65535)");
                return -EINVAL;
        }
        if (o->cq_mod > o->tx_depth) {
                snprintf(err, err_size,
                         "--cq-mod %u is above --tx-depth %u: no write would ever be signalled", o->cq_mod,
                         o->tx_depth);
                return -EINVAL;
        }
        if (!o->want_bandwidth && !o->want_latency)
                o->want_bandwidth = o->want_latency = true;
        return 0;
}
