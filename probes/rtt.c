/*
 * sparkd-probe-rtt: round-trip latency between two nodes over TCP (TCP_NODELAY), speaking
 * sparkd's probe contract (probe_common.h). The client sends a message of --size bytes and waits
 * for the server to echo all of it back, --count times; each round trip is timed with
 * CLOCK_MONOTONIC. The result has min, median, p99 (nearest rank), max and mean in microseconds.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/macro.h"
#include "probe_session.h"

#define PROG          "sparkd-probe-rtt"
#define MAX_SIZE      (1 << 20)
#define MAX_COUNT     1000000
#define MAX_INTERVAL  10000000 /* µs */
#define ECHO_BUF_SIZE (64 * 1024)

struct options {
        struct probe_args args;
        uint64_t count;
        uint64_t size;
        uint64_t interval_us;
};

static void usage(void)
{
        printf("Usage: " PROG " --server [--bind ADDR] [--port PORT] [OPTIONS]\n"
               "       " PROG
               " --client ADDR --port PORT [--count N] [--size BYTES] [--interval-us U] [OPTIONS]\n"
               "\n"
               "Measures TCP round trips (TCP_NODELAY, ping-pong of one message) to a server started with\n"
               "--server. The server serves one client and exits; it prints "
               "{\"phase\":\"listening\",\"port\":P}\n"
               "as soon as it listens.\n"
               "\n"
               "  -s, --server            echo for one client\n"
               "  -c, --client ADDR       measure to the server at IPv4 address ADDR\n"
               "  -B, --bind ADDR         local IPv4 address: the server's listen address, the client's "
               "source\n"
               "  -p, --port PORT         server: port to listen on (default 0: any free port); client: "
               "required\n"
               "  -n, --count N           round trips, 1..%d (default 1000)\n"
               "  -l, --size BYTES        message size, 1..%d, K/M suffixes allowed (default 64)\n"
               "  -i, --interval-us U     microseconds from one round trip's start to the next, 0..%d\n"
               "                          (default 0: back to back)\n"
               "      --deadline SEC      give up with a timeout result after SEC seconds (default 30)\n"
               "      --json              JSON lines even on a terminal (the default when stdout is not "
               "one)\n"
               "  -h, --help              this text\n"
               "      --version           the version\n"
               "\n"
               "Authentication: when " PROBE_TOKEN_ENV " is set, the client sends it first and the server\n"
               "takes only a connection that sends the same value; when it is unset (use by hand), no "
               "token\n"
               "is needed on either side.\n"
               "\n"
               "Output: progress lines {\"phase\":...} and one final {\"result\":{...}} line with min_us,\n"
               "median_us, p99_us (nearest rank), max_us and mean_us. Exit status: 0 success, 1 failure or\n"
               "timeout, 2 bad command line.\n",
               MAX_COUNT, MAX_SIZE, MAX_INTERVAL);
}

#define OWN(member) PROBE_FIELD(struct options, member)
static const struct probe_opt rtt_options[] = {
        PROBE_OPTS_SOCKET,
        { "count", 'n', PROBE_ARG_UINT, OWN(count), 1, MAX_COUNT, PROBE_OPT_CLIENT_ONLY },
        { "size", 'l', PROBE_ARG_SIZE, OWN(size), 1, MAX_SIZE, PROBE_OPT_CLIENT_ONLY },
        { "interval-us", 'i', PROBE_ARG_UINT, OWN(interval_us), 0, MAX_INTERVAL, PROBE_OPT_CLIENT_ONLY },
        PROBE_OPT_DEADLINE(0),
        {},
};
static const struct probe_cmdline cmdline = { .prog = PROG, .opts = rtt_options, .usage = usage };

/* ---- human output ---- */

static void human(json_object *line)
{
        json_object *r;
        const char *phase = probe_json_text(line, "phase");

        if (probe_human_common(line))
                return;
        if (json_object_object_get_ex(line, "result", &r)) {
                if (strcmp(probe_json_text(r, "role"), "server") == 0) {
                        printf("echoed %.0f messages (%.0f bytes) for %s\n", probe_json_number(r, "count"),
                               probe_json_number(r, "bytes"), probe_json_text(r, "remote"));
                        return;
                }
                printf("%s -> %s: %.0f round trips of %.0f bytes\n", probe_json_text(r, "local"),
                       probe_json_text(r, "remote"), probe_json_number(r, "count"),
                       probe_json_number(r, "size"));
                printf("%10s %10s %10s %10s %10s  (µs)\n", "min", "median", "p99", "max", "mean");
                printf("%10.1f %10.1f %10.1f %10.1f %10.1f\n", probe_json_number(r, "min_us"),
                       probe_json_number(r, "median_us"), probe_json_number(r, "p99_us"),
                       probe_json_number(r, "max_us"), probe_json_number(r, "mean_us"));
                return;
        }
        if (strcmp(phase, "connecting") == 0)
                printf("connecting to %s port %.0f\n", probe_json_text(line, "remote"),
                       probe_json_number(line, "port"));
        else if (strcmp(phase, "running") == 0 && json_object_object_get_ex(line, "done", NULL))
                printf("%6.1f s %10.0f round trips\n", probe_json_number(line, "elapsed_s"),
                       probe_json_number(line, "done"));
        else if (strcmp(phase, "running") == 0)
                printf("client %s connected\n", probe_json_text(line, "remote"));
}

/* ---- client ---- */

static int read_full(int fd, char *buf, size_t len)
{
        while (len > 0) {
                ssize_t n = recv(fd, buf, len, 0);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -ECONNRESET;
                buf += n;
                len -= (size_t)n;
        }
        return 0;
}

static int run_client(const void *options, const char *token)
{
        const struct options *o = options;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ double *samples = NULL;
        _cleanup_free_ char *out = NULL, *in = NULL;
        struct probe_hello hello = { .kind = "rtt", .version = PROBE_PROTO_VERSION, .streams = 1 };
        char err[PROBE_ERROR_MAX], local[INET_ADDRSTRLEN], remote[INET_ADDRSTRLEN], c;
        struct probe_stats st;
        double start, next_progress;
        json_object *line, *result;
        int one = 1, r;

        samples = calloc(o->count, sizeof(*samples));
        out = malloc(o->size);
        in = malloc(o->size);
        if (!samples || !out || !in)
                return probe_fail("out of memory");
        memset(out, 'r', o->size);
        hello.size = o->size;
        hello.count = o->count;
        probe_session_id(hello.session, sizeof(hello.session));

        probe_emit(probe_connecting_line(&o->args));
        fd = probe_connect(&o->args.bind, &o->args.remote, o->args.port, 0, token, &hello, err, sizeof(err));
        if (fd < 0)
                return probe_fail("%s", err);
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        probe_sockname(fd, false, local, sizeof(local));
        probe_sockname(fd, true, remote, sizeof(remote));

        probe_phase("running");
        start = probe_now();
        next_progress = start + 1;
        for (uint64_t i = 0; i < o->count; i++) {
                double t0, t1;

                if (o->interval_us && i > 0)
                        probe_sleep_until(start + (double)i * (double)o->interval_us / 1e6);
                t0 = probe_now();
                r = probe_write_all(fd, out, o->size);
                if (r == 0)
                        r = read_full(fd, in, o->size);
                t1 = probe_now();
                if (r < 0)
                        return probe_fail("round trip %llu failed: %s", (unsigned long long)i + 1,
                                          r == -ECONNRESET ? "the server closed the connection"
                                                           : strerror(-r));
                samples[i] = (t1 - t0) * 1e6;
                if (t1 >= next_progress) {
                        line = json_object_new_object();
                        json_object_object_add(line, "phase", json_object_new_string("running"));
                        json_object_object_add(line, "elapsed_s", probe_json_double(t1 - start, 1));
                        json_object_object_add(line, "done", json_object_new_int64((int64_t)i + 1));
                        probe_emit(line);
                        next_progress += 1;
                }
        }

        /* A clean end: the server sees EOF, finishes and closes; its close tells us it is done. */
        probe_phase("finishing");
        if (shutdown(fd, SHUT_WR) < 0)
                return probe_fail("cannot end the connection: %s", strerror(errno));
        while ((r = (int)recv(fd, &c, 1, 0)) < 0 && errno == EINTR)
                ;
        if (r != 0)
                return probe_fail("the server did not end the session cleanly");

        (void)probe_stats_compute(samples, o->count, &st);
        result = json_object_new_object();
        json_object_object_add(result, "kind", json_object_new_string("rtt"));
        json_object_object_add(result, "ok", json_object_new_boolean(true));
        json_object_object_add(result, "role", json_object_new_string("client"));
        json_object_object_add(result, "count", json_object_new_int64((int64_t)st.count));
        json_object_object_add(result, "size", json_object_new_int64((int64_t)o->size));
        json_object_object_add(result, "min_us", probe_json_double(st.min, 1));
        json_object_object_add(result, "median_us", probe_json_double(st.median, 1));
        json_object_object_add(result, "p99_us", probe_json_double(st.p99, 1));
        json_object_object_add(result, "max_us", probe_json_double(st.max, 1));
        json_object_object_add(result, "mean_us", probe_json_double(st.mean, 1));
        json_object_object_add(result, "local", json_object_new_string(local));
        json_object_object_add(result, "remote", json_object_new_string(remote));
        probe_emit(probe_result_line(result));
        return 0;
}

/* ---- server ---- */

static int run_server(const void *options, const char *token)
{
        const struct options *o = options;
        _cleanup_close_ int lfd = -EBADF, fd = -EBADF;
        _cleanup_free_ char *buf = malloc(ECHO_BUF_SIZE);
        struct probe_hello hello;
        char err[PROBE_ERROR_MAX], local[INET_ADDRSTRLEN], remote[INET_ADDRSTRLEN];
        uint64_t bytes = 0;
        json_object *line, *result;
        int one = 1, r;

        if (!buf)
                return probe_fail("out of memory");
        lfd = probe_listen(&o->args.bind, o->args.port, 0, err, sizeof(err));
        if (lfd < 0)
                return probe_fail("%s", err);
        r = probe_accept_session(lfd, "rtt", token, 1, &fd, &hello, err, sizeof(err));
        if (r < 0)
                return probe_fail("%s", err);
        lfd = (close(lfd), -EBADF); /* one client only */
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        probe_sockname(fd, false, local, sizeof(local));
        probe_sockname(fd, true, remote, sizeof(remote));

        probe_phase("running");
        line = json_object_new_object();
        json_object_object_add(line, "phase", json_object_new_string("running"));
        json_object_object_add(line, "remote", json_object_new_string(remote));
        probe_emit(line);
        for (;;) {
                ssize_t n = recv(fd, buf, ECHO_BUF_SIZE, 0);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return probe_fail("receiving failed: %s", strerror(errno));
                if (n == 0)
                        break;
                r = probe_write_all(fd, buf, (size_t)n);
                if (r < 0)
                        return probe_fail("echoing failed: %s", strerror(-r));
                bytes += (uint64_t)n;
        }

        result = json_object_new_object();
        json_object_object_add(result, "kind", json_object_new_string("rtt"));
        json_object_object_add(result, "ok", json_object_new_boolean(true));
        json_object_object_add(result, "role", json_object_new_string("server"));
        json_object_object_add(result, "count",
                               json_object_new_int64((int64_t)(hello.size ? bytes / hello.size : 0)));
        json_object_object_add(result, "size", json_object_new_int64((int64_t)hello.size));
        json_object_object_add(result, "bytes", json_object_new_int64((int64_t)bytes));
        json_object_object_add(result, "local", json_object_new_string(local));
        json_object_object_add(result, "remote", json_object_new_string(remote));
        probe_emit(probe_result_line(result));
        return 0;
}

static const struct probe_helper rtt = { "rtt", human, &cmdline, run_server, run_client };

int main(int argc, char **argv)
{
        struct options o = { .args.deadline = 30, .count = 1000, .size = 64 };

        return probe_main(&rtt, argc, argv, &o.args, &o);
}
