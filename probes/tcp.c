/*
 * sparkd-probe-tcp: TCP throughput between two nodes, like iperf3 but speaking sparkd's probe
 * contract (probe_common.h). The client sends on N streams for the duration and shuts down
 * writing; the server counts what each stream delivered and, once every stream has ended, answers
 * each with what it received. The result is what the receiver saw: bytes that really crossed,
 * over the receiver's time from the first byte to the last stream's end.
 *
 * Then, unless the client asked for one way only, the same connections carry the other
 * direction: the server sends for as long (the hello's reverse_ms) and the client counts. A rail
 * can be slow one way only, so the result has both directions, each with the local netdev that
 * carried it, and its gbps is the weaker one's.
 *
 * One thread per stream on each side, each in a plain blocking send or recv loop, and 16 MiB
 * socket buffers where the system allows them. Measured against iperf3 3.12 over a veth pair
 * (tests/bench/tcp_probe_vs_iperf3.sh): one thread polling non-blocking sockets, iperf3's own way,
 * about matched it but lost ground with four streams and large buffers; threads with large
 * buffers came out ahead with one stream and four, and they are what a 200 Gb/s link needs
 * anyway (iperf3 itself went to a thread per stream in 3.16). The main thread only prints
 * progress and is the one the deadline's signal goes to.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/macro.h"
#include "probe_session.h"
#include "tcp_stream.h"

#define PROG         "sparkd-probe-tcp"
#define MAX_STREAMS  64
#define DEFAULT_SIZE (128 * 1024)
/* Socket buffers asked for where the system allows it (see set_buffer in probe_common.c): enough for 100
 * Gb/s at a few hundred microseconds of round trip. */
#define SOCKET_BUFFER (16 * 1024 * 1024)

struct options {
        struct probe_args args;
        unsigned streams;
        double duration;
        uint64_t size;
        bool is_one_way;
};

static void usage(void)
{
        printf("Usage: " PROG " --server [--bind ADDR] [--port PORT] [OPTIONS]\n"
               "       " PROG
               " --client ADDR --port PORT [--streams N] [--duration SEC] [--size BYTES] [OPTIONS]\n"
               "\n"
               "Measures TCP throughput to a server started with --server. The server serves one client\n"
               "session and exits; it prints {\"phase\":\"listening\",\"port\":P} as soon as it listens.\n"
               "\n"
               "  -s, --server          wait for one client session\n"
               "  -c, --client ADDR     send to the server at IPv4 address ADDR\n"
               "  -B, --bind ADDR       local IPv4 address: the server's listen address, the client's "
               "source\n"
               "  -p, --port PORT       server: port to listen on (default 0: any free port); client: "
               "required\n"
               "  -P, --streams N       parallel TCP streams, 1..%d (default 1)\n"
               "  -t, --duration SEC    how long the client sends (default 5)\n"
               "  -l, --size BYTES      bytes per write, K/M suffixes allowed (default 128K)\n"
               "      --one-way         measure client -> server only (default: then server -> client too)\n"
               "      --deadline SEC    give up with a timeout result after SEC seconds (default 30)\n"
               "      --json            JSON lines even on a terminal (the default when stdout is not one)\n"
               "  -h, --help            this text\n"
               "      --version         the version\n"
               "\n"
               "Authentication: when " PROBE_TOKEN_ENV
               " is set, the client sends it first on every connection\n"
               "and the server takes only connections that send the same value; when it is unset (use by\n"
               "hand), no token is needed on either side.\n"
               "\n"
               "Output: progress lines {\"phase\":...} and one final {\"result\":{...}} line; Gb/s are "
               "decimal\n"
               "(1e9 bits), from the bytes the receiver received. The client's result has \"directions\":\n"
               "forward (client -> server) and reverse, each with its Gb/s and the local netdev "
               "(\"rails\"),\n"
               "and \"gbps\" is the weaker direction's. Exit status: 0 success, 1 failure or\n"
               "timeout, 2 bad command line.\n",
               MAX_STREAMS);
}

#define OWN(member) PROBE_FIELD(struct options, member)
static const struct probe_opt tcp_options[] = {
        PROBE_OPTS_SOCKET,
        { "streams", 'P', PROBE_ARG_UINT, OWN(streams), 1, MAX_STREAMS, PROBE_OPT_CLIENT_ONLY },
        { "duration", 't', PROBE_ARG_SECONDS, OWN(duration), 0, 86400, PROBE_OPT_CLIENT_ONLY },
        { "size", 'l', PROBE_ARG_SIZE, OWN(size), 1, 16 << 20, PROBE_OPT_CLIENT_ONLY },
        { "one-way", 0, PROBE_ARG_FLAG, OWN(is_one_way), 0, 0, PROBE_OPT_CLIENT_ONLY },
        PROBE_OPT_DEADLINE(0),
        {},
};
static const struct probe_cmdline cmdline = { .prog = PROG, .opts = tcp_options, .usage = usage };

/* ---- human output ---- */

static void human(json_object *line)
{
        json_object *r, *v, *per;
        const char *phase = probe_json_text(line, "phase");

        if (probe_human_common(line))
                return;
        if (json_object_object_get_ex(line, "result", &r)) {
                if (strcmp(probe_json_text(r, "role"), "server") == 0) {
                        printf("received %.0f bytes from %s on %.0f streams in %.2f s: %.2f Gb/s\n",
                               probe_json_number(r, "bytes"), probe_json_text(r, "remote"),
                               probe_json_number(r, "streams"), probe_json_number(r, "duration_s"),
                               probe_json_number(r, "gbps"));
                        return;
                }
                printf("%6s %16s %10s\n", "stream", "bytes", "Gb/s");
                json_object_object_get_ex(r, "per_stream", &per);
                for (size_t i = 0; per && i < json_object_array_length(per); i++) {
                        json_object *s = json_object_array_get_idx(per, i);

                        printf("%6zu %16.0f %10.2f\n", i, probe_json_number(s, "bytes"),
                               probe_json_number(s, "gbps"));
                }
                printf("%6s %16.0f %10.2f\n", "all", probe_json_number(r, "bytes"),
                       probe_json_number(r, "gbps"));
                json_object_object_get_ex(r, "directions", &per);
                for (size_t i = 0; per && i < json_object_array_length(per); i++) {
                        json_object *d = json_object_array_get_idx(per, i);

                        printf("%-7s %s -> %s: %.2f Gb/s over %.2f s, retransmits: %s\n",
                               probe_json_text(d, "direction"), probe_json_text(d, "from"),
                               probe_json_text(d, "to"), probe_json_number(d, "gbps"),
                               probe_json_number(d, "duration_s"),
                               json_object_object_get_ex(d, "retransmits", &v) && v
                                       ? json_object_get_string(v)
                                       : "at the sender");
                }
                return;
        }
        if (strcmp(phase, "connecting") == 0)
                printf("connecting to %s port %.0f, %.0f streams, %.1f s\n", probe_json_text(line, "remote"),
                       probe_json_number(line, "port"), probe_json_number(line, "streams"),
                       probe_json_number(line, "duration_s"));
        else if (strcmp(phase, "running") == 0 && json_object_object_get_ex(line, "elapsed_s", NULL))
                printf("%6.1f s %10.2f Gb/s sent\n", probe_json_number(line, "elapsed_s"),
                       probe_json_number(line, "gbps"));
        else if (strcmp(phase, "running") == 0)
                printf("client %s connected, %.0f streams\n", probe_json_text(line, "remote"),
                       probe_json_number(line, "streams"));
}

/* The server's line for one stream: {"stream":i,"bytes":b,"seconds":s}. */
static int read_summary(struct tcp_stream *st, unsigned i, double *seconds)
{
        _cleanup_json_ json_object *o = NULL;
        char line[PROBE_HELLO_MAX];
        json_object *v;
        int r;

        r = probe_read_line(st->fd, line, sizeof(line), (int)(probe_deadline_left() * 1000) + 1);
        if (r < 0)
                return probe_fail("stream %u: no summary from the server: %s", i,
                                  r == -ECONNRESET ? "it closed the connection" : strerror(-r));
        o = json_tokener_parse(line);
        if (!o || !json_object_object_get_ex(o, "bytes", &v) || !json_object_is_type(v, json_type_int))
                return probe_fail("stream %u: the server's summary is not understood", i);
        st->received = (uint64_t)json_object_get_int64(v);
        if (json_object_object_get_ex(o, "seconds", &v))
                *seconds = json_object_get_double(v);
        return 0;
}

/* ---- client ---- */

/* The client's side of the reverse direction: what the server sends on every stream until it
 * ends its writing; bytes over the client's time from the first byte to the last stream's end. */
static int receive_reverse(struct tcp_stream *s, unsigned n, uint64_t *bytes, double *seconds)
{
        double first = 0, last = 0;
        int r;

        for (unsigned i = 0; i < n; i++) {
                s[i].received = 0;
                s[i].first_byte = s[i].ended = 0;
                s[i].error = 0;
        }
        r = tcp_receive_all(s, n, &first, &last);
        if (r)
                return r;
        *bytes = 0;
        for (unsigned i = 0; i < n; i++)
                *bytes += s[i].received;
        *seconds = first > 0 && last > first ? last - first : 0;
        return 0;
}

/* One direction of the result: {direction, from, to, gbps, bytes, duration_s, retransmits, rails}.
 * The rail is the local netdev: on a node with one address per rail, it names the rail. */
static json_object *direction_json(const char *direction, const char *from, const char *to, uint64_t bytes,
                                   double seconds, json_object *retransmits, const char *netdev)
{
        json_object *d = json_object_new_object(), *rails = json_object_new_array();
        double gbps = probe_gbps(bytes, seconds);

        json_object_object_add(d, "direction", json_object_new_string(direction));
        json_object_object_add(d, "from", json_object_new_string(from));
        json_object_object_add(d, "to", json_object_new_string(to));
        json_object_object_add(d, "gbps", probe_json_double(gbps, 3));
        json_object_object_add(d, "bytes", json_object_new_int64((int64_t)bytes));
        json_object_object_add(d, "duration_s", probe_json_double(seconds, 3));
        json_object_object_add(d, "retransmits", retransmits);
        if (netdev[0]) {
                json_object *rail = json_object_new_object();

                json_object_object_add(rail, "name", json_object_new_string(netdev));
                json_object_object_add(rail, "netdev", json_object_new_string(netdev));
                json_object_object_add(rail, "gbps", probe_json_double(gbps, 3));
                json_object_array_add(rails, rail);
        }
        json_object_object_add(d, "rails", rails);
        return d;
}

static int run_client(const void *options, const char *token)
{
        const struct options *o = options;
        struct tcp_stream s[MAX_STREAMS];
        struct probe_hello hello = { .kind = "tcp", .version = PROBE_PROTO_VERSION, .streams = o->streams };
        char err[PROBE_ERROR_MAX], local[INET_ADDRSTRLEN], remote[INET_ADDRSTRLEN], netdev[IF_NAMESIZE];
        uint64_t bytes = 0, sent = 0, forward[MAX_STREAMS], reverse_bytes = 0;
        double seconds = 0, started, reverse_seconds = 0, gbps;
        json_object *line, *result, *per, *retrans, *directions;
        int r = 0;

        hello.size = o->size;
        if (!o->is_one_way)
                hello.reverse_ms = o->duration * 1000 >= 1 ? (uint64_t)(o->duration * 1000 + 0.5) : 1;
        probe_session_id(hello.session, sizeof(hello.session));
        for (unsigned i = 0; i < o->streams; i++)
                s[i] = (struct tcp_stream){ .fd = -EBADF };

        line = probe_connecting_line(&o->args);
        json_object_object_add(line, "streams", json_object_new_int((int)o->streams));
        json_object_object_add(line, "duration_s", probe_json_double(o->duration, 3));
        json_object_object_add(line, "both_directions", json_object_new_boolean(!o->is_one_way));
        probe_emit(line);
        for (unsigned i = 0; i < o->streams; i++) {
                hello.stream = i;
                s[i].fd = probe_connect(&o->args.bind, &o->args.remote, o->args.port, SOCKET_BUFFER, token,
                                        &hello, err, sizeof(err));
                if (s[i].fd < 0) {
                        r = probe_fail("%s", err);
                        goto out;
                }
        }
        probe_sockname(s[0].fd, false, local, sizeof(local));
        probe_sockname(s[0].fd, true, remote, sizeof(remote));
        (void)probe_netdev_of(local, netdev, sizeof(netdev));

        probe_phase("running");
        started = probe_now();
        r = tcp_send_for(s, o->streams, o->duration, o->size);
        if (r)
                goto out;
        for (unsigned i = 0; i < o->streams; i++)
                if (shutdown(s[i].fd, SHUT_WR) < 0) {
                        r = probe_fail("stream %u: cannot end the stream: %s", i, strerror(errno));
                        goto out;
                }

        probe_phase("finishing");
        for (unsigned i = 0; i < o->streams; i++) {
                r = read_summary(&s[i], i, &seconds);
                if (r)
                        goto out;
                bytes += s[i].received;
                sent += s[i].sent;
                forward[i] = s[i].received;
        }
        /* The receiver's time; the sender's (which ends before its last bytes arrive) only when the
         * server did not say. */
        if (!(seconds > 0))
                seconds = probe_now() - started;
        retrans = tcp_retransmits(s, o->streams);
        if (!o->is_one_way) {
                probe_phase("reverse");
                r = receive_reverse(s, o->streams, &reverse_bytes, &reverse_seconds);
                if (r) {
                        json_object_put(retrans);
                        goto out;
                }
        }

        result = json_object_new_object();
        gbps = probe_gbps(bytes, seconds);
        if (!o->is_one_way && probe_gbps(reverse_bytes, reverse_seconds) < gbps)
                gbps = probe_gbps(reverse_bytes, reverse_seconds);
        json_object_object_add(result, "kind", json_object_new_string("tcp"));
        json_object_object_add(result, "ok", json_object_new_boolean(true));
        json_object_object_add(result, "role", json_object_new_string("client"));
        json_object_object_add(result, "streams", json_object_new_int((int)o->streams));
        json_object_object_add(result, "duration_s", probe_json_double(seconds, 3));
        json_object_object_add(result, "bytes", json_object_new_int64((int64_t)bytes));
        json_object_object_add(result, "bytes_sent", json_object_new_int64((int64_t)sent));
        json_object_object_add(result, "gbps", probe_json_double(gbps, 3));
        json_object_object_add(result, "retransmits", json_object_get(retrans));
        per = json_object_new_array();
        for (unsigned i = 0; i < o->streams; i++) {
                json_object *ps = json_object_new_object();

                json_object_object_add(ps, "bytes", json_object_new_int64((int64_t)forward[i]));
                json_object_object_add(ps, "gbps", probe_json_double(probe_gbps(forward[i], seconds), 3));
                json_object_array_add(per, ps);
        }
        json_object_object_add(result, "per_stream", per);
        json_object_object_add(result, "size", json_object_new_int64((int64_t)o->size));
        json_object_object_add(result, "local", json_object_new_string(local));
        json_object_object_add(result, "remote", json_object_new_string(remote));
        directions = json_object_new_array();
        json_object_array_add(directions,
                              direction_json("forward", local, remote, bytes, seconds, retrans, netdev));
        /* The reverse direction's retransmits are counted by its sender: the server's result. */
        if (!o->is_one_way)
                json_object_array_add(directions, direction_json("reverse", remote, local, reverse_bytes,
                                                                 reverse_seconds, NULL, netdev));
        json_object_object_add(result, "directions", directions);
        probe_emit(probe_result_line(result));
out:
        for (unsigned i = 0; i < o->streams; i++)
                if (s[i].fd >= 0)
                        close(s[i].fd);
        return r;
}

/* ---- server ---- */

static int run_server(const void *options, const char *token)
{
        const struct options *o = options;
        _cleanup_close_ int lfd = -EBADF;
        struct tcp_stream s[MAX_STREAMS];
        int fds[MAX_STREAMS];
        struct probe_hello hello;
        char err[PROBE_ERROR_MAX], local[INET_ADDRSTRLEN], remote[INET_ADDRSTRLEN];
        double first = 0, last = 0, seconds;
        uint64_t bytes = 0, reverse_sent = 0;
        json_object *line, *result, *per, *reverse_retrans = NULL;
        int r;

        lfd = probe_listen(&o->args.bind, o->args.port, SOCKET_BUFFER, err, sizeof(err));
        if (lfd < 0)
                return probe_fail("%s", err);
        r = probe_accept_session(lfd, "tcp", token, MAX_STREAMS, fds, &hello, err, sizeof(err));
        if (r < 0)
                return probe_fail("%s", err);
        lfd = (close(lfd), -EBADF); /* one session only: later clients are refused by the kernel */
        for (unsigned i = 0; i < hello.streams; i++)
                s[i] = (struct tcp_stream){ .fd = fds[i] };
        probe_sockname(s[0].fd, false, local, sizeof(local));
        probe_sockname(s[0].fd, true, remote, sizeof(remote));

        probe_phase("running");
        line = json_object_new_object();
        json_object_object_add(line, "phase", json_object_new_string("running"));
        json_object_object_add(line, "remote", json_object_new_string(remote));
        json_object_object_add(line, "streams", json_object_new_int((int)hello.streams));
        probe_emit(line);
        r = tcp_receive_all(s, hello.streams, &first, &last);
        if (r)
                goto out;
        seconds = first > 0 && last > first ? last - first : 0;

        probe_phase("finishing");
        for (unsigned i = 0; i < hello.streams; i++) {
                char summary[128];

                snprintf(summary, sizeof(summary), "{\"stream\":%u,\"bytes\":%llu,\"seconds\":%.6f}\n", i,
                         (unsigned long long)s[i].received, seconds);
                /* A client gone by now lost only its summary; this side's result stands. */
                (void)probe_write_all(s[i].fd, summary, strlen(summary));
                bytes += s[i].received;
        }
        if (hello.reverse_ms) {
                probe_phase("reverse");
                r = tcp_send_for(s, hello.streams, (double)hello.reverse_ms / 1000,
                                 hello.size ? hello.size : DEFAULT_SIZE);
                if (r)
                        goto out;
                for (unsigned i = 0; i < hello.streams; i++) {
                        reverse_sent += s[i].sent;
                        if (shutdown(s[i].fd, SHUT_WR) < 0) {
                                r = probe_fail("stream %u: cannot end the stream: %s", i, strerror(errno));
                                goto out;
                        }
                }
                reverse_retrans = tcp_retransmits(s, hello.streams);
        }

        result = json_object_new_object();
        json_object_object_add(result, "kind", json_object_new_string("tcp"));
        json_object_object_add(result, "ok", json_object_new_boolean(true));
        json_object_object_add(result, "role", json_object_new_string("server"));
        json_object_object_add(result, "streams", json_object_new_int((int)hello.streams));
        json_object_object_add(result, "duration_s", probe_json_double(seconds, 3));
        json_object_object_add(result, "bytes", json_object_new_int64((int64_t)bytes));
        json_object_object_add(result, "gbps", probe_json_double(probe_gbps(bytes, seconds), 3));
        per = json_object_new_array();
        for (unsigned i = 0; i < hello.streams; i++) {
                json_object *ps = json_object_new_object();

                json_object_object_add(ps, "bytes", json_object_new_int64((int64_t)s[i].received));
                json_object_object_add(ps, "gbps", probe_json_double(probe_gbps(s[i].received, seconds), 3));
                json_object_array_add(per, ps);
        }
        json_object_object_add(result, "per_stream", per);
        json_object_object_add(result, "local", json_object_new_string(local));
        json_object_object_add(result, "remote", json_object_new_string(remote));
        if (hello.reverse_ms) {
                json_object_object_add(result, "reverse_bytes_sent",
                                       json_object_new_int64((int64_t)reverse_sent));
                json_object_object_add(result, "reverse_retransmits", reverse_retrans);
        }
        probe_emit(probe_result_line(result));
out:
        for (unsigned i = 0; i < hello.streams; i++)
                close(s[i].fd);
        return r;
}

static const struct probe_helper tcp = { "tcp", human, &cmdline, run_server, run_client };

int main(int argc, char **argv)
{
        struct options o = { .args.deadline = 30, .streams = 1, .duration = 5, .size = DEFAULT_SIZE };

        return probe_main(&tcp, argc, argv, &o.args, &o);
}
