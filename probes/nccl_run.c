#include "nccl_run.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/macro.h"
#include "probe_common.h"

enum {
        MS_CUDA_INIT,
        MS_BUFFERS,
        MS_UNIQUE_ID,
        MS_COMM_INIT,
        MS_WARMUP,
        MS_TIMED,
        MS_CHECK,
        MS_FINALIZE,
        MS_SLOTS
};
static const char *const slot_names[MS_SLOTS] = { "cuda_init", "buffers", "unique_id", "comm_init",
                                                  "warmup",    "timed",   "check",     "finalize" };

/* The slowest rate a collective is allowed before its phase counts as hung: the same floor the
 * daemon's deadline assumes (probe_kinds.c), and never less than PHASE_MIN_SEC. */
#define FLOOR_BYTES_PER_SEC 500e6
#define PHASE_MIN_SEC       10.0
/* The server's init also waits for the other ranks to start CUDA and join. */
#define PEER_START_SEC 30.0
/* What aborting NCCL may take once a failure is out; then the process just ends. */
#define ABORT_SEC 10.0
#define LOG_TAIL  6
#define POLL_US   50

extern char **environ;

static void pause_us(long us)
{
        struct timespec ts = { .tv_sec = 0, .tv_nsec = us * 1000 };

        nanosleep(&ts, NULL);
}

static double ms_since(double t)
{
        return (probe_now() - t) * 1000;
}

static void set_phase(struct nccl_run *r, const char *phase)
{
        json_object *line = json_object_new_object();

        r->phase = phase;
        probe_phase(phase);
        json_object_object_add(line, "phase", json_object_new_string(phase));
        probe_emit(line);
}

/* Re-reads NCCL's log into the transport facts; tail (when given) gets its last lines. */
static void read_log(struct nccl_run *r, json_object *tail)
{
        _cleanup_fclose_ FILE *f = fopen(r->log_path, "re");
        char line[4096], last[LOG_TAIL][240];
        size_t n = 0;

        memset(&r->transport, 0, sizeof(r->transport));
        r->log_lines = 0;
        if (!f)
                return;
        while (fgets(line, sizeof(line), f)) {
                r->log_lines++;
                nccl_transport_parse_line(&r->transport, line);
                line[strcspn(line, "\n")] = '\0';
                snprintf(last[n++ % LOG_TAIL], sizeof(last[0]), "%.239s", line);
        }
        for (size_t i = n > LOG_TAIL ? n - LOG_TAIL : 0; tail && i < n; i++)
                json_object_array_add(tail, json_object_new_string(last[i % LOG_TAIL]));
}

static bool env_is(const char *name, const char *value)
{
        const char *v = getenv(name);

        return v && strcmp(v, value) == 0;
}

/* What every result has, good or not: who, where, the NCCL settings, the phases, the transport. */
static json_object *base_result(struct nccl_run *r, bool ok)
{
        json_object *o = json_object_new_object(), *phases = json_object_new_object(),
                    *env = json_object_new_object();
        const char *rdma = getenv(RDMA_ENV);
        int version = 0;
        char v[32];

        json_object_object_add(o, "kind", json_object_new_string("nccl"));
        json_object_object_add(o, "ok", json_object_new_boolean(ok));
        json_object_object_add(o, "role", json_object_new_string(r->o.args.is_server ? "server" : "client"));
        json_object_object_add(o, "rank", json_object_new_int(r->o.rank));
        json_object_object_add(o, "nranks", json_object_new_int(r->o.nranks));
        if (r->o.args.remote_arg)
                json_object_object_add(o, "remote", json_object_new_string(r->o.args.remote_arg));
        if (ncclGetVersion(&version) == ncclSuccess) {
                snprintf(v, sizeof(v), "%d.%d.%d", version / 10000, version / 100 % 100, version % 100);
                json_object_object_add(o, "nccl_version", json_object_new_string(v));
        }
        json_object_object_add(o, "iters", json_object_new_int((int)r->o.iters));
        json_object_object_add(o, "warmup_iters", json_object_new_int((int)r->o.warmup_iters));
        for (int i = 0; i < MS_SLOTS; i++)
                if (r->ms[i] > 0)
                        json_object_object_add(phases, slot_names[i], probe_json_double(r->ms[i], 1));
        json_object_object_add(o, "phases_ms", phases);
        for (char **e = environ; *e; e++) {
                const char *eq = strchr(*e, '=');
                char name[128];

                if (!eq || strncmp(*e, "NCCL_", 5) != 0 || strncmp(*e, "NCCL_DEBUG", 10) == 0 ||
                    (size_t)(eq - *e) >= sizeof(name))
                        continue;
                snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
                json_object_object_add(env, name, json_object_new_string(eq + 1));
        }
        json_object_object_add(o, "nccl_env", env);
        if (r->log_lines)
                json_object_object_add(o, "transport", nccl_transport_to_json(&r->transport, rdma));
        if (nccl_transport_socket_fallback(&r->transport, rdma) && !env_is("NCCL_IB_DISABLE", "1")) {
                char why[400];

                snprintf(why, sizeof(why),
                         "NCCL moved data over TCP sockets although this node has RDMA devices (%.200s): "
                         "check NCCL_IB_HCA, the RDMA modules and the ports (sparkc doctor)",
                         rdma);
                json_object_object_add(o, "degraded_reason", json_object_new_string(why));
        }
        return o;
}

/* After a failure is out: abort NCCL, but let nothing outlast ABORT_SEC. */
static void abort_comm(struct nccl_run *r)
{
        (void)probe_deadline_arm(ABORT_SEC);
        if (r->comm)
                (void)ncclCommAbort(r->comm);
        r->comm = NULL;
}

static int fail_with(struct nccl_run *r, bool unavailable, json_object *diagnosis, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static int fail_with(struct nccl_run *r, bool unavailable, json_object *diagnosis, const char *fmt, ...)
{
        json_object *o, *tail = json_object_new_array();
        char error[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(error, sizeof(error), fmt, ap);
        va_end(ap);
        read_log(r, tail);
        o = base_result(r, false);
        json_object_object_add(o, "error", json_object_new_string(error));
        json_object_object_add(o, "phase", json_object_new_string(r->phase));
        if (unavailable)
                json_object_object_add(o, "unavailable", json_object_new_boolean(true));
        if (diagnosis)
                json_object_object_add(o, "diagnosis", diagnosis);
        if (json_object_array_length(tail))
                json_object_object_add(o, "nccl_log_tail", tail);
        else
                json_object_put(tail);
        if (r->ops && json_object_array_length(r->ops))
                json_object_object_add(o, "ops", json_object_get(r->ops));
        probe_emit(probe_result_line(o));
        abort_comm(r);
        return 1;
}

static void nccl_error(struct nccl_run *r, ncclResult_t res, const char *call, char *err, size_t size)
{
        const char *last = r->comm ? ncclGetLastError(r->comm) : ncclGetLastError(NULL);

        snprintf(err, size, "%s: %s%s%.200s", call, ncclGetErrorString(res), last && *last ? ": " : "",
                 last ? last : "");
}

/* Until the communicator is out of ncclInProgress, it fails, or `until` passes (-ETIMEDOUT). */
static int wait_comm(struct nccl_run *r, const char *call, double until, char *err, size_t size)
{
        for (;;) {
                ncclResult_t state = ncclInProgress, q = ncclCommGetAsyncError(r->comm, &state);

                if (q != ncclSuccess || (state != ncclSuccess && state != ncclInProgress)) {
                        nccl_error(r, q != ncclSuccess ? q : state, call, err, size);
                        return -EPROTO;
                }
                if (state == ncclSuccess)
                        return 0;
                if (probe_now() >= until)
                        return -ETIMEDOUT;
                pause_us(200);
        }
}

/* Until the stream's work is done, NCCL or CUDA reports an error, or `until` passes. */
static int wait_stream(struct nccl_run *r, const char *call, double until, char *err, size_t size)
{
        for (;;) {
                cudaError_t ce = cudaStreamQuery(r->stream);
                ncclResult_t state = ncclSuccess;

                if (ce == cudaSuccess)
                        return 0;
                if (ce != cudaErrorNotReady) {
                        snprintf(err, size, "%s: CUDA: %s", call, cudaGetErrorString(ce));
                        return -EIO;
                }
                if (ncclCommGetAsyncError(r->comm, &state) == ncclSuccess && state != ncclSuccess &&
                    state != ncclInProgress) {
                        nccl_error(r, state, call, err, size);
                        return -EPROTO;
                }
                if (probe_now() >= until)
                        return -ETIMEDOUT;
                pause_us(POLL_US);
        }
}

static int hang(struct nccl_run *r, const char *call, double since)
{
        const char *unified = getenv(UNIFIED_ENV);
        struct nccl_hang h = {
                .call = call,
                .phase = r->phase,
                .waited_sec = probe_now() - since,
                .unified_memory = unified && strcmp(unified, "1") == 0,
                .gdr_level = getenv("NCCL_NET_GDR_LEVEL"),
                .dmabuf_enable = getenv("NCCL_DMABUF_ENABLE"),
                .transport = &r->transport,
        };
        char error[512];
        json_object *d;

        read_log(r, NULL);
        d = nccl_hang_diagnose(&h, error, sizeof(error));
        return fail_with(r, false, d, "%s", error);
}

/* The latest a phase that starts now may end: its own allowance, within the overall deadline. */
static double phase_until(double allowance)
{
        double left = probe_deadline_left() - 1;

        return probe_now() + (allowance < left ? allowance : left > 0 ? left : 0);
}

/* What each rank sends in rounds collectives is nccl-tests' bus factor of the buffer (2(n-1)/n for
 * all_reduce, (n-1)/n for all_gather): 1 and 1/2 for a pair, 3/2 and 3/4 for four ranks, whose
 * all_reduce on a slow ring ran past an allowance made for a pair. */
static double collective_allowance(enum nccl_op op, const struct nccl_counts *c, unsigned rounds, int nranks)
{
        double n = nranks > 1 ? nranks : 2;
        double moved = (double)c->bytes * (op == NCCL_OP_ALL_REDUCE ? 2.0 : 1.0) * (n - 1) / n * rounds;

        return moved / FLOOR_BYTES_PER_SEC > PHASE_MIN_SEC ? moved / FLOOR_BYTES_PER_SEC : PHASE_MIN_SEC;
}

static const char *call_name(enum nccl_op op)
{
        return op == NCCL_OP_ALL_REDUCE ? "ncclAllReduce" : "ncclAllGather";
}

/* Enqueues n collectives, waiting out ncclInProgress (a non-blocking communicator's answer). */
static int issue(struct nccl_run *r, enum nccl_op op, const struct nccl_counts *c, unsigned n, double until,
                 char *err, size_t size)
{
        for (unsigned i = 0; i < n; i++) {
                ncclResult_t res = op == NCCL_OP_ALL_REDUCE
                                           ? ncclAllReduce(r->send, r->recv, c->send_count, ncclFloat,
                                                           ncclSum, r->comm, r->stream)
                                           : ncclAllGather(r->send, r->recv, c->send_count, ncclFloat,
                                                           r->comm, r->stream);
                int w;

                if (res == ncclInProgress) {
                        w = wait_comm(r, call_name(op), until, err, size);
                        if (w < 0)
                                return w;
                } else if (res != ncclSuccess) {
                        nccl_error(r, res, call_name(op), err, size);
                        return -EPROTO;
                }
        }
        return 0;
}

static const char *const warmup_phase[NCCL_OP_COUNT] = { "all_reduce warm-up", "all_gather warm-up" };
static const char *const timed_phase[NCCL_OP_COUNT] = { "all_reduce timed", "all_gather timed" };
static const char *const check_phase[NCCL_OP_COUNT] = { "all_reduce check", "all_gather check" };

/* One collective at one size: warm-up, the timed iterations, the check. */
static int run_size(struct nccl_run *r, enum nccl_op op, const struct nccl_counts *c, json_object *sizes)
{
        json_object *s = json_object_new_object(), *line = json_object_new_object();
        struct nccl_mismatch m;
        char err[PROBE_ERROR_MAX];
        double t, sec;
        float ms = 0;
        bool correct;
        int w;

        json_object_object_add(line, "phase", json_object_new_string("running"));
        json_object_object_add(line, "op", json_object_new_string(nccl_op_name(op)));
        json_object_object_add(line, "bytes", json_object_new_int64((int64_t)c->bytes));
        probe_emit(line);

        r->phase = warmup_phase[op];
        probe_phase(r->phase);
        t = probe_now();
        /* NaN everywhere: a collective that writes nothing fails the check. */
        if (cudaMemsetAsync(r->recv, 0xff, c->recv_count * sizeof(float), r->stream) != cudaSuccess)
                return json_object_put(s), fail_with(r, false, NULL, "cudaMemsetAsync failed");
        w = issue(r, op, c, r->o.warmup_iters,
                  phase_until(collective_allowance(op, c, r->o.warmup_iters + 1, r->o.nranks)), err,
                  sizeof(err));
        if (w == 0)
                w = wait_stream(r, call_name(op),
                                phase_until(collective_allowance(op, c, r->o.warmup_iters + 1, r->o.nranks)),
                                err, sizeof(err));
        if (w == -ETIMEDOUT)
                return json_object_put(s), hang(r, call_name(op), t);
        if (w < 0)
                return json_object_put(s), fail_with(r, false, NULL, "%s", err);
        r->ms[MS_WARMUP] += ms_since(t);

        r->phase = timed_phase[op];
        probe_phase(r->phase);
        t = probe_now();
        {
                double until = phase_until(collective_allowance(op, c, r->o.iters + 1, r->o.nranks));

                /* The start event waits for one untimed collective, which every rank has reached. */
                w = issue(r, op, c, 1, until, err, sizeof(err));
                if (w == 0 && cudaEventRecord(r->start, r->stream) != cudaSuccess)
                        w = -EIO, snprintf(err, sizeof(err), "cudaEventRecord failed");
                if (w == 0)
                        w = issue(r, op, c, r->o.iters, until, err, sizeof(err));
                if (w == 0 && cudaEventRecord(r->stop, r->stream) != cudaSuccess)
                        w = -EIO, snprintf(err, sizeof(err), "cudaEventRecord failed");
                if (w == 0)
                        w = wait_stream(r, call_name(op), until, err, sizeof(err));
        }
        if (w == -ETIMEDOUT)
                return json_object_put(s), hang(r, call_name(op), t);
        if (w < 0)
                return json_object_put(s), fail_with(r, false, NULL, "%s", err);
        if (cudaEventElapsedTime(&ms, r->start, r->stop) != cudaSuccess)
                return json_object_put(s), fail_with(r, false, NULL, "cudaEventElapsedTime failed");
        r->ms[MS_TIMED] += ms;
        sec = (double)ms / 1000 / r->o.iters;

        r->phase = check_phase[op];
        probe_phase(r->phase);
        t = probe_now();
        if (cudaMemcpy(r->host, r->recv, c->recv_count * sizeof(float), cudaMemcpyDeviceToHost) !=
            cudaSuccess)
                return json_object_put(s),
                       fail_with(r, false, NULL, "cannot copy the result back from the GPU");
        correct = nccl_check(op, r->host, c->recv_count, c->send_count, r->o.nranks, &m);
        r->ms[MS_CHECK] += ms_since(t);
        if (!correct && !r->wrong[0])
                snprintf(r->wrong, sizeof(r->wrong),
                         "%s at %llu bytes gave wrong results: %zu of %zu elements differ (element %zu is "
                         "%g, "
                         "%g expected)",
                         nccl_op_name(op), (unsigned long long)c->bytes, m.wrong, c->recv_count, m.first,
                         (double)m.got, (double)m.expected);

        json_object_object_add(s, "bytes", json_object_new_int64((int64_t)c->bytes));
        json_object_object_add(s, "time_us", probe_json_double(sec * 1e6, 1));
        json_object_object_add(s, "algbw", probe_json_double(nccl_algbw(c->bytes, sec), 3));
        json_object_object_add(s, "busbw",
                               probe_json_double(nccl_busbw(op, nccl_algbw(c->bytes, sec), r->o.nranks), 3));
        json_object_object_add(s, "correct", json_object_new_boolean(correct));
        if (!correct)
                json_object_object_add(s, "wrong_elements", json_object_new_int64((int64_t)m.wrong));
        json_object_array_add(sizes, s);
        /* all_reduce is the judged one; all_gather only when it runs alone. */
        if (op == NCCL_OP_ALL_REDUCE || !r->o.ops[NCCL_OP_ALL_REDUCE]) {
                r->algbw = nccl_algbw(c->bytes, sec);
                r->busbw = nccl_busbw(op, r->algbw, r->o.nranks);
                r->busbw_bytes = c->bytes;
        }
        return 0;
}

static int start_cuda(struct nccl_run *r)
{
        int count = 0;
        cudaError_t ce = cudaGetDeviceCount(&count);
        const char *visible = getenv("CUDA_VISIBLE_DEVICES");

        if (ce != cudaSuccess || count == 0)
                return fail_with(r, true, NULL, "no CUDA device: %s",
                                 ce != cudaSuccess ? cudaGetErrorString(ce) : "the CUDA runtime sees none");
        if (r->o.device >= count)
                return fail_with(r, true, NULL,
                                 "no CUDA device %d: this process sees %d (CUDA_VISIBLE_DEVICES=%s)",
                                 r->o.device, count, visible ? visible : "unset");
        if ((ce = cudaSetDevice(r->o.device)) != cudaSuccess || (ce = cudaFree(NULL)) != cudaSuccess ||
            (ce = cudaStreamCreateWithFlags(&r->stream, cudaStreamNonBlocking)) != cudaSuccess ||
            (ce = cudaEventCreate(&r->start)) != cudaSuccess ||
            (ce = cudaEventCreate(&r->stop)) != cudaSuccess)
                return fail_with(r, false, NULL, "CUDA start-up on device %d failed: %s", r->o.device,
                                 cudaGetErrorString(ce));
        return 0;
}

static int make_buffers(struct nccl_run *r)
{
        size_t count = (size_t)(r->o.max_bytes / sizeof(float));
        cudaError_t ce;

        r->host = malloc(count * sizeof(float));
        if (!r->host)
                return fail_with(r, false, NULL, "cannot allocate %zu bytes of host memory",
                                 count * sizeof(float));
        if ((ce = cudaMalloc(&r->send, count * sizeof(float))) != cudaSuccess ||
            (ce = cudaMalloc(&r->recv, count * sizeof(float))) != cudaSuccess)
                return fail_with(r, false, NULL, "cannot allocate 2 x %zu bytes on the GPU: %s",
                                 count * sizeof(float), cudaGetErrorString(ce));
        for (size_t i = 0; i < count; i++)
                r->host[i] = nccl_pattern(i, r->o.rank);
        if ((ce = cudaMemcpy(r->send, r->host, count * sizeof(float), cudaMemcpyHostToDevice)) !=
            cudaSuccess)
                return fail_with(r, false, NULL, "cannot fill the send buffer: %s", cudaGetErrorString(ce));
        return 0;
}

static json_object *device_json(const struct nccl_run *r)
{
        json_object *d = json_object_new_object();
        struct cudaDeviceProp prop;
        char bus[32];

        json_object_object_add(d, "index", json_object_new_int(r->o.device));
        if (cudaGetDeviceProperties(&prop, r->o.device) == cudaSuccess)
                json_object_object_add(d, "name", json_object_new_string(prop.name));
        if (cudaDeviceGetPCIBusId(bus, sizeof(bus), r->o.device) == cudaSuccess)
                json_object_object_add(d, "pci", json_object_new_string(bus));
        return d;
}

static void emit_listening(const ncclUniqueId *id, int nranks)
{
        json_object *line = json_object_new_object();
        char hex[2 * sizeof(id->internal) + 1];

        for (size_t i = 0; i < sizeof(id->internal); i++)
                snprintf(hex + 2 * i, 3, "%02x", (unsigned char)id->internal[i]);
        probe_phase("listening");
        json_object_object_add(line, "phase", json_object_new_string("listening"));
        json_object_object_add(line, "nccl_id", json_object_new_string(hex));
        json_object_object_add(line, "nranks", json_object_new_int(nranks));
        probe_emit(line);
}

static int init_comm(struct nccl_run *r, const ncclUniqueId *given)
{
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        ncclUniqueId id;
        ncclResult_t res;
        char err[PROBE_ERROR_MAX];
        double t;
        int w;

        if (given) {
                id = *given;
        } else {
                res = ncclGetUniqueId(&id);
                if (res != ncclSuccess) {
                        nccl_error(r, res, "ncclGetUniqueId", err, sizeof(err));
                        return fail_with(r, false, NULL, "%s", err);
                }
                emit_listening(&id, r->o.nranks);
        }
        set_phase(r, "comm_init");
        t = probe_now();
        /* Non-blocking, so a hang is noticed here rather than by whoever kills this process. */
        config.blocking = 0;
        res = ncclCommInitRankConfig(&r->comm, r->o.nranks, id, r->o.rank, &config);
        if (res != ncclSuccess && res != ncclInProgress) {
                nccl_error(r, res, "ncclCommInitRank", err, sizeof(err));
                return fail_with(r, false, NULL, "%s", err);
        }
        w = wait_comm(r, "ncclCommInitRank",
                      phase_until((double)r->o.init_timeout_ms / 1000 + (given ? 0 : PEER_START_SEC)), err,
                      sizeof(err));
        if (w == -ETIMEDOUT)
                return hang(r, "ncclCommInitRank", t);
        if (w < 0)
                return fail_with(r, false, NULL, "%s", err);
        r->ms[MS_COMM_INIT] = ms_since(t);
        return 0;
}

static int finish_comm(struct nccl_run *r)
{
        char err[PROBE_ERROR_MAX];
        ncclResult_t res;
        double t;
        int w = 0;

        set_phase(r, "finalize");
        t = probe_now();
        res = ncclCommFinalize(r->comm);
        if (res == ncclInProgress)
                w = wait_comm(r, "ncclCommFinalize", phase_until(PHASE_MIN_SEC), err, sizeof(err));
        else if (res != ncclSuccess)
                nccl_error(r, res, "ncclCommFinalize", err, sizeof(err)), w = -EPROTO;
        if (w == -ETIMEDOUT)
                return hang(r, "ncclCommFinalize", t);
        if (w < 0)
                return fail_with(r, false, NULL, "%s", err);
        (void)ncclCommDestroy(r->comm);
        r->comm = NULL;
        r->ms[MS_FINALIZE] = ms_since(t);
        return 0;
}

int nccl_run(struct nccl_run *r, const ncclUniqueId *id)
{
        uint64_t sizes[NCCL_MAX_SIZES];
        size_t n_sizes = nccl_sizes(r->o.min_bytes, r->o.max_bytes, r->o.step_factor, sizes, NCCL_MAX_SIZES);
        json_object *o;
        double t;
        int rc;

        r->ops = json_object_new_array();
        set_phase(r, "cuda_init");
        t = probe_now();
        rc = start_cuda(r);
        if (rc)
                return rc;
        r->ms[MS_CUDA_INIT] = ms_since(t);
        set_phase(r, "buffers");
        t = probe_now();
        rc = make_buffers(r);
        if (rc)
                return rc;
        r->ms[MS_BUFFERS] = ms_since(t);
        if (r->wait_id) {
                char err[PROBE_ERROR_MAX];

                set_phase(r, "unique_id");
                t = probe_now();
                if (r->wait_id(&r->given_id, probe_now() + probe_deadline_left() - 1, err, sizeof(err)) < 0)
                        return fail_with(r, false, NULL, "%s", err);
                r->ms[MS_UNIQUE_ID] = ms_since(t);
                id = &r->given_id;
        }
        rc = init_comm(r, id);
        if (rc)
                return rc;
        for (int op = 0; op < NCCL_OP_COUNT; op++) {
                json_object *entry, *list;

                if (!r->o.ops[op])
                        continue;
                entry = json_object_new_object();
                list = json_object_new_array();
                json_object_object_add(entry, "op", json_object_new_string(nccl_op_name((enum nccl_op)op)));
                json_object_object_add(entry, "sizes", list);
                json_object_array_add(r->ops, entry);
                for (size_t i = 0; i < n_sizes; i++) {
                        struct nccl_counts c;

                        nccl_counts((enum nccl_op)op, sizes[i], r->o.nranks, &c);
                        if (c.bytes && (rc = run_size(r, (enum nccl_op)op, &c, list)))
                                return rc;
                }
        }
        rc = finish_comm(r);
        if (rc)
                return rc;
        read_log(r, NULL);
        if (r->wrong[0])
                return fail_with(r, false, NULL, "%s", r->wrong);
        o = base_result(r, true);
        json_object_object_add(o, "device", device_json(r));
        json_object_object_add(o, "busbw_gbytes", probe_json_double(r->busbw, 3));
        json_object_object_add(o, "algbw_gbytes", probe_json_double(r->algbw, 3));
        json_object_object_add(o, "busbw_bytes", json_object_new_int64((int64_t)r->busbw_bytes));
        json_object_object_add(o, "ops", r->ops);
        r->ops = NULL;
        probe_emit(probe_result_line(o));
        return 0;
}
