/*
 * sparkd-probe-nccl: NCCL bus bandwidth between GPUs of different nodes, measured the way
 * nccl-tests' all_reduce_perf and all_gather_perf measure it, speaking sparkd's probe contract
 * (probe_common.h). One process per rank and GPU. The server is rank 0: it makes NCCL's unique
 * id and prints it in its listening line; the client (rank 1, or --rank) takes it from
 * SPARKD_PROBE_NCCL_ID, where sparkd puts it after carrying it over the authenticated peer
 * channel. Both then build a communicator and run every collective at every size: warm-up
 * iterations, one untimed collective both ranks take part in (so neither clock starts before the
 * other rank is there), the timed iterations between two CUDA events, and a check of the output
 * on the host. Data is float sums, as nccl-tests' defaults.
 *
 * The communicator is non-blocking, so this process notices itself when a phase does not end in
 * time: a communicator init that hangs is aborted and reported as "hang in ncclCommInitRank", with
 * the likely cause on a unified-memory GPU. NCCL's INFO log (NCCL_DEBUG_FILE, a private temporary
 * file) says which transport it really used.
 *
 * Plain C on the CUDA runtime API: filling and checking buffers on the host after a copy costs a
 * fraction of a second per size and keeps nvcc out of the build.
 */
#include <arpa/inet.h>
#include <cuda_runtime_api.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <nccl.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/macro.h"
#include "nccl_report.h"
#include "nccl_run.h"
#include "probe_common.h"

#define PROG "sparkd-probe-nccl"

static void usage(void)
{
        printf("Usage: " PROG " --server [--bind ADDR] [OPTIONS]\n"
               "       SPARKD_PROBE_NCCL_ID=HEX " PROG " --client ADDR [--bind ADDR] [OPTIONS]\n"
               "\n"
               "Measures NCCL all_reduce and all_gather bus bandwidth between two processes, one GPU each,\n"
               "usually on two nodes, as nccl-tests does. The server (rank 0) prints\n"
               "{\"phase\":\"listening\",\"nccl_id\":HEX} as soon as NCCL's unique id exists; give HEX to "
               "the\n"
               "client in " NCCL_ID_ENV ". Both sides need the same sizes, iterations and ops.\n"
               "\n"
               "  -s, --server            rank 0: make the unique id and wait for the other ranks\n"
               "  -c, --client ADDR       a rank that joins the server at ADDR (for the report; the id "
               "says\n"
               "                          where the server listens)\n"
               "  -B, --bind ADDR         the local fabric address: NCCL_SOCKET_IFNAME is set to its\n"
               "                          interface unless it is set already\n"
               "      --rank R            this client's rank (default 1)\n"
               "      --nranks N          ranks in the communicator, 2..%d (default 2)\n"
               "  -d, --device N          the CUDA device (default 0; CUDA_VISIBLE_DEVICES applies)\n"
               "  -b, --min-bytes SIZE    smallest size (default 1M; K, M, G suffixes)\n"
               "  -e, --max-bytes SIZE    largest size (default 256M, at most 128G)\n"
               "  -f, --step-factor N     each size is N times the one before (default 2)\n"
               "  -n, --iters N           timed iterations per size (default 20)\n"
               "  -w, --warmup-iters N    warm-up iterations per size (default 1)\n"
               "      --op NAME           all_reduce or all_gather; repeat for both (default both)\n"
               "      --init-timeout-ms MS  how long the communicator's init may take (default 30000)\n"
               "      --id-stdin          a client reads the unique id (hex, one line) from stdin once its\n"
               "                          GPU and buffers are ready, in place of " NCCL_ID_ENV "\n"
               "      --deadline SEC      give up with a timeout result after SEC seconds (default 300)\n"
               "      --json              JSON lines even on a terminal\n"
               "  -h, --help              this text\n"
               "      --version           the version\n"
               "\n"
               "Environment: NCCL's own variables apply (sparkd runs this with `sparkc env`'s); "
               "NCCL_DEBUG,\n"
               "NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE are set here to read which transport NCCL "
               "used.\n" UNIFIED_ENV
               "=1 says the GPU shares memory with the CPU (GB10), which names GPU Direct RDMA\n"
               "as the cause of an init hang; " RDMA_ENV
               "=mlx5_0,... lists the node's RDMA devices, so that\n"
               "NCCL falling back to TCP sockets is flagged.\n"
               "\n"
               "Output: progress lines {\"phase\":...} and one final {\"result\":{...}} line with "
               "busbw_gbytes\n"
               "(all_reduce busbw at the largest size, GB/s), per op and size bytes, time_us, algbw, busbw\n"
               "and correct, the transport and the time of each phase. algbw = bytes / time, busbw = algbw\n"
               "* 2(n-1)/n (all_reduce) or * (n-1)/n (all_gather), as nccl-tests prints them. A host "
               "without\n"
               "a CUDA device fails at once with \"unavailable\": true. Exit status: 0 success, 1 failure "
               "or\n"
               "timeout, 2 bad command line.\n",
               NCCL_RANKS_MAX);
}

static int read_op(const char *arg, void *own, char *err, size_t err_size)
{
        struct nccl_options *o = own;
        enum nccl_op op;

        if (nccl_op_from_name(arg, &op) < 0) {
                snprintf(err, err_size, "--op is all_reduce or all_gather, not '%s'", arg);
                return -EINVAL;
        }
        o->ops[op] = true;
        return 0;
}

#define OWN(member) PROBE_FIELD(struct nccl_options, member)
static const struct probe_opt nccl_options[] = {
        PROBE_OPT_SERVER,
        PROBE_OPT_CLIENT_NAME,
        PROBE_OPT_BIND,
        { "rank", 0, PROBE_ARG_UINT, OWN(rank), 1, NCCL_RANKS_MAX - 1, PROBE_OPT_CLIENT_ONLY },
        { "nranks", 0, PROBE_ARG_UINT, OWN(nranks), 2, NCCL_RANKS_MAX },
        { "device", 'd', PROBE_ARG_UINT, OWN(device), 0, 255 },
        { "min-bytes", 'b', PROBE_ARG_SIZE, OWN(min_bytes), 1024, NCCL_BYTES_MAX },
        { "max-bytes", 'e', PROBE_ARG_SIZE, OWN(max_bytes), 1024, NCCL_BYTES_MAX },
        { "step-factor", 'f', PROBE_ARG_UINT, OWN(step_factor), 2, 1024 },
        { "iters", 'n', PROBE_ARG_UINT, OWN(iters), 1, 10000 },
        { "warmup-iters", 'w', PROBE_ARG_UINT, OWN(warmup_iters), 0, 1000 },
        { "op", 0, PROBE_ARG_CALL, .read = read_op },
        { "init-timeout-ms", 0, PROBE_ARG_UINT, OWN(init_timeout_ms), 1, 600000 },
        { "id-stdin", 0, PROBE_ARG_FLAG, OWN(id_stdin), 0, 0, PROBE_OPT_CLIENT_ONLY },
        PROBE_OPT_DEADLINE(0),
        {},
};

/* The checks between options, after the shared ones. */
static int options_check(struct probe_args *args, void *own, char *err, size_t err_size)
{
        struct nccl_options *o = own;

        if (o->min_bytes > o->max_bytes) {
                snprintf(err, err_size, "--min-bytes is above --max-bytes");
                return -EINVAL;
        }
        if (args->is_server)
                o->rank = 0;
        if (o->rank >= o->nranks) {
                snprintf(err, err_size, "--rank %d is not below --nranks %d", o->rank, o->nranks);
                return -EINVAL;
        }
        if (!o->ops[NCCL_OP_ALL_REDUCE] && !o->ops[NCCL_OP_ALL_GATHER])
                o->ops[NCCL_OP_ALL_REDUCE] = o->ops[NCCL_OP_ALL_GATHER] = true;
        return 0;
}

static const struct probe_cmdline cmdline = {
        .prog = PROG,
        .opts = nccl_options,
        .client_only_error = "the server is rank 0: --rank is for clients",
        .usage = usage,
        .check = options_check,
};

/* ---- human output ---- */

static void human(json_object *line)
{
        json_object *r, *v, *ops, *t = NULL;

        if (!json_object_object_get_ex(line, "result", &r)) {
                if (strcmp(probe_json_text(line, "phase"), "listening") == 0)
                        printf("NCCL unique id ready; give it to the client:\n" NCCL_ID_ENV "=%s\n",
                               probe_json_text(line, "nccl_id"));
                else
                        printf("%s\n", probe_json_text(line, "phase"));
                return;
        }
        json_object_object_get_ex(r, "transport", &t);
        if (probe_human_failed(r)) {
                if (json_object_object_get_ex(r, "diagnosis", &v) && v)
                        printf("cause: %s\nfix: %s\n", probe_json_text(v, "cause"),
                               probe_json_text(v, "fix"));
                return;
        }
        printf("%-11s %12s %12s %11s %11s %s\n", "op", "bytes", "time_us", "algbw GB/s", "busbw GB/s",
               "check");
        json_object_object_get_ex(r, "ops", &ops);
        for (size_t i = 0; ops && i < json_object_array_length(ops); i++) {
                json_object *op = json_object_array_get_idx(ops, i), *sizes;

                json_object_object_get_ex(op, "sizes", &sizes);
                for (size_t j = 0; sizes && j < json_object_array_length(sizes); j++) {
                        json_object *s = json_object_array_get_idx(sizes, j);

                        printf("%-11s %12.0f %12.1f %11.2f %11.2f %s\n", probe_json_text(op, "op"),
                               probe_json_number(s, "bytes"), probe_json_number(s, "time_us"),
                               probe_json_number(s, "algbw"), probe_json_number(s, "busbw"),
                               json_object_object_get_ex(s, "correct", &v) && json_object_get_boolean(v)
                                       ? "ok"
                                       : "WRONG");
                }
        }
        printf("busbw %.2f GB/s at %.0f bytes; network %s, paths %s%s\n",
               probe_json_number(r, "busbw_gbytes"), probe_json_number(r, "busbw_bytes"),
               t ? probe_json_text(t, "network") : "?",
               t && json_object_object_get_ex(t, "paths", &v) ? json_object_get_string(v) : "?",
               t && json_object_object_get_ex(t, "socket_fallback", &v) && json_object_get_boolean(v)
                       ? " (TCP sockets although the node has RDMA devices)"
                       : "");
}

/* ---- set-up ---- */

/* NCCL's INFO log for INIT and NET into a private file, whatever NCCL_DEBUG the caller had. */
static int debug_log_setup(struct nccl_run *r)
{
        const char *tmp = getenv("TMPDIR"), *level = getenv("NCCL_DEBUG"),
                   *subsys = getenv("NCCL_DEBUG_SUBSYS");
        char value[512];
        int fd;

        snprintf(r->log_path, sizeof(r->log_path), "%s/sparkd-probe-nccl.XXXXXX",
                 tmp && *tmp ? tmp : "/tmp");
        fd = mkstemp(r->log_path);
        if (fd < 0)
                return -errno;
        close(fd);
        if (!level || (strcasecmp(level, "INFO") != 0 && strcasecmp(level, "TRACE") != 0))
                setenv("NCCL_DEBUG", "INFO", 1);
        /* A "^..." list excludes; anything else is kept next to what is read here. */
        snprintf(value, sizeof(value), "INIT,NET%s%s", subsys && *subsys && *subsys != '^' ? "," : "",
                 subsys && *subsys && *subsys != '^' ? subsys : "");
        setenv("NCCL_DEBUG_SUBSYS", value, 1);
        setenv("NCCL_DEBUG_FILE", r->log_path, 1);
        return 0;
}

/* NCCL_SOCKET_IFNAME from --bind's interface, unless the caller chose one. */
static void pin_socket_interface(const struct nccl_options *o)
{
        struct ifaddrs *list, *i;
        char value[IF_NAMESIZE + 2];

        if (!o->args.has_bind || getenv("NCCL_SOCKET_IFNAME") || getifaddrs(&list) < 0)
                return;
        for (i = list; i; i = i->ifa_next)
                if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
                    ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == o->args.bind.s_addr) {
                        snprintf(value, sizeof(value), "=%s", i->ifa_name);
                        setenv("NCCL_SOCKET_IFNAME", value, 1);
                        break;
                }
        freeifaddrs(list);
}

static int hex_decode(const char *hex, unsigned char *out, size_t n)
{
        if (!hex || strlen(hex) != 2 * n)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                unsigned v;

                if (sscanf(hex + 2 * i, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", hex[2 * i]) ||
                    !strchr("0123456789abcdefABCDEF", hex[2 * i + 1]))
                        return -EINVAL;
                out[i] = (unsigned char)v;
        }
        return 0;
}

/* The unique id as one line of hex on stdin (--id-stdin), waited for until the deadline: sparkd
 * writes it when rank 0 has made it, while this rank's CUDA start-up ran in parallel. */
static int read_id_stdin(ncclUniqueId *id, double until, char *err, size_t size)
{
        char line[2 * sizeof(id->internal) + 8];
        size_t used = 0;

        while (used < sizeof(line) - 1) {
                struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
                double left = until - probe_now();
                ssize_t n;

                if (left <= 0) {
                        snprintf(err, size, "no unique id on stdin within the deadline");
                        return -ETIMEDOUT;
                }
                if (poll(&p, 1, (int)(left * 1000) + 1) <= 0)
                        continue;
                n = read(STDIN_FILENO, line + used, sizeof(line) - 1 - used);
                if (n <= 0) {
                        snprintf(err, size, "stdin closed before the unique id came");
                        return -EPIPE;
                }
                used += (size_t)n;
                line[used] = '\0';
                if (strchr(line, '\n')) {
                        *strchr(line, '\n') = '\0';
                        if (hex_decode(line, (unsigned char *)id->internal, sizeof(id->internal)) == 0)
                                return 0;
                        break;
                }
        }
        snprintf(err, size, "stdin did not hold a unique id of %zu hex digits", 2 * sizeof(id->internal));
        return -EINVAL;
}

static const struct probe_helper nccl = { .kind = "nccl", .human = human, .cmdline = &cmdline };

int main(int argc, char **argv)
{
        struct nccl_run run = { .o = { .args.deadline = 300,
                                       .rank = 1,
                                       .nranks = 2,
                                       .min_bytes = 1 << 20,
                                       .max_bytes = 256 << 20,
                                       .step_factor = 2,
                                       .iters = 20,
                                       .warmup_iters = 1,
                                       .init_timeout_ms = 30000 } };
        ncclUniqueId id;
        int r;

        r = probe_start(&nccl, argc, argv, &run.o.args, &run.o, NULL);
        if (r)
                return r;
        if (run.o.id_stdin)
                run.wait_id = read_id_stdin;
        else if (!run.o.args.is_server &&
                 hex_decode(getenv(NCCL_ID_ENV), (unsigned char *)id.internal, sizeof(id.internal)) < 0)
                return probe_usage_error(PROG,
                                         "the client needs NCCL's unique id in " NCCL_ID_ENV
                                         " (%zu hex digits, the server's nccl_id)",
                                         2 * sizeof(id.internal));
        if (debug_log_setup(&run) < 0)
                return probe_fail("cannot make a temporary file for NCCL's log: %s", strerror(errno));
        pin_socket_interface(&run.o);
        r = nccl_run(&run, run.o.args.is_server ? NULL : &id);
        unlink(run.log_path);
        json_object_put(run.ops);
        free(run.host);
        return r;
}
