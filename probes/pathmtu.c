/*
 * sparkd-probe-pathmtu: whether the path to a peer carries full-MTU packets end to end, speaking
 * sparkd's probe contract (probe_common.h). The interfaces at both ends can say 9000 while a hop
 * between them carries 1500: jumbo frames then vanish, or come back as ICMP
 * fragmentation-needed, and only large transfers break.
 *
 * The client sends UDP datagrams with don't-fragment (IP_PMTUDISC_PROBE: DF set, and the
 * kernel's cached path MTU ignored, so every size really crosses the path now rather than being
 * refused from what an earlier packet taught the kernel) to the server, which answers each with a
 * short acknowledgement. It tries MTU - 28 bytes of payload first, then searches (binary, from 68
 * bytes) for the largest size that gets through; each size gets --tries sends of --timeout-ms.
 * One byte more than the interface's MTU - 28 must be refused by the local stack (don't-fragment
 * in effect).
 *
 * Datagrams: "SPMTU1 P SEQ TOKEN\n" padded to the size (probe), "SPMTU1 A SEQ BYTES\n" (the
 * acknowledgement), "SPMTU1 B 0 TOKEN\n" (the client is done; the server exits).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/macro.h"
#include "pathmtu_search.h"
#include "probe_session.h"

#define PROG            "sparkd-probe-pathmtu"
#define MAGIC           "SPMTU1"
#define MAX_DATAGRAM    65507 /* the largest UDP payload over IPv4 */
#define MAX_MTU         (MAX_DATAGRAM + PATHMTU_HEADER_BYTES)
#define MIN_MTU         (PATHMTU_FLOOR_BYTES + PATHMTU_HEADER_BYTES)
#define DEFAULT_TIMEOUT 300 /* ms per send */
#define DEFAULT_TRIES   3
#define BYE_COPIES      3

struct options {
        struct probe_args args;
        uint64_t mtu; /* 0: the local interface's */
        uint64_t timeout_ms;
        uint64_t tries;
};

static void usage(void)
{
        printf("Usage: " PROG " --server [--bind ADDR] [--port PORT] [OPTIONS]\n"
               "       " PROG " --client ADDR --port PORT [--bind ADDR] [--mtu N] [--timeout-ms MS] "
               "[--tries N] [OPTIONS]\n"
               "\n"
               "Finds the largest UDP payload that reaches the server with don't-fragment set, and\n"
               "fails when that is less than the local interface's MTU - 28 (IPv4 and UDP headers):\n"
               "a hop between the two ends that does not carry the MTU both ends have. The server\n"
               "acknowledges each datagram and exits when the client is done; it prints\n"
               "{\"phase\":\"listening\",\"port\":P} as soon as it listens.\n"
               "\n"
               "  -s, --server            acknowledge for one client\n"
               "  -c, --client ADDR       measure the path to the server at IPv4 address ADDR\n"
               "  -B, --bind ADDR         local IPv4 address: the server's listen address, the client's "
               "source\n"
               "  -p, --port PORT         server: UDP port (default 0: any free port); client: required\n"
               "  -m, --mtu N             the MTU the path must carry, %d..%d (default: the MTU of the\n"
               "                          interface the client sends from)\n"
               "  -t, --timeout-ms MS     how long one send waits for its acknowledgement, 10..10000\n"
               "                          (default %d)\n"
               "  -n, --tries N           sends per size before it counts as not getting through, 1..10\n"
               "                          (default %d)\n"
               "      --deadline SEC      give up with a timeout result after SEC seconds (default 60)\n"
               "      --json              JSON lines even on a terminal (the default when stdout is not "
               "one)\n"
               "  -h, --help              this text\n"
               "      --version           the version\n"
               "\n"
               "Authentication: when " PROBE_TOKEN_ENV " is set, every datagram carries it and the server\n"
               "answers only those that do; unset (use by hand), any datagram is answered.\n"
               "\n"
               "Output: progress lines {\"phase\":...} and one final {\"result\":{...}} line with mtu,\n"
               "full_payload, largest_payload, path_mtu, tries, icmp (whether the path answered too-large\n"
               "packets with ICMP fragmentation-needed) and over_mtu_refused. Exit status: 0 the full\n"
               "size got through, 1 it did not (an error starting \"path-mtu:\"), or another failure or\n"
               "timeout, 2 bad command line.\n",
               MIN_MTU, MAX_MTU, DEFAULT_TIMEOUT, DEFAULT_TRIES);
}

#define OWN(member) PROBE_FIELD(struct options, member)
static const struct probe_opt pathmtu_options[] = {
        PROBE_OPTS_SOCKET,
        { "mtu", 'm', PROBE_ARG_UINT, OWN(mtu), MIN_MTU, MAX_MTU, PROBE_OPT_CLIENT_ONLY },
        { "timeout-ms", 't', PROBE_ARG_UINT, OWN(timeout_ms), 10, 10000, PROBE_OPT_CLIENT_ONLY },
        { "tries", 'n', PROBE_ARG_UINT, OWN(tries), 1, 10, PROBE_OPT_CLIENT_ONLY },
        PROBE_OPT_DEADLINE(0),
        {},
};
static const struct probe_cmdline cmdline = { .prog = PROG, .opts = pathmtu_options, .usage = usage };

/* ---- human output ---- */

static void human(json_object *line)
{
        json_object *r, *v;
        const char *phase;

        if (json_object_object_get_ex(line, "result", &r)) {
                bool ok = !json_object_object_get_ex(r, "ok", &v) || json_object_get_boolean(v);

                if (strcmp(probe_json_text(r, "role"), "server") == 0) {
                        printf("acknowledged %.0f datagrams for %s, the largest %.0f bytes\n",
                               probe_json_number(r, "received"), probe_json_text(r, "remote"),
                               probe_json_number(r, "largest_received"));
                        return;
                }
                if (!json_object_object_get_ex(r, "largest_payload", NULL) && probe_human_failed(r))
                        return;
                printf("%s (%s, MTU %.0f) -> %s: largest payload %.0f of %.0f bytes, path MTU %.0f, %.0f "
                       "sizes tried\n",
                       probe_json_text(r, "local"), probe_json_text(r, "iface"), probe_json_number(r, "mtu"),
                       probe_json_text(r, "remote"), probe_json_number(r, "largest_payload"),
                       probe_json_number(r, "full_payload"), probe_json_number(r, "path_mtu"),
                       probe_json_number(r, "tries"));
                if (!ok)
                        printf("%s\n", probe_json_text(r, "error"));
                return;
        }
        phase = probe_json_text(line, "phase");
        if (strcmp(phase, "listening") == 0)
                printf("listening on %s UDP port %.0f\n", probe_json_text(line, "address"),
                       probe_json_number(line, "port"));
        else if (strcmp(phase, "trying") == 0)
                printf("%6.0f bytes: %s\n", probe_json_number(line, "size"),
                       json_object_object_get_ex(line, "passed", &v) && json_object_get_boolean(v)
                               ? "through"
                               : "not through");
}

/* ---- datagrams ---- */

/* "SPMTU1 T SEQ WORD\n" into buf (at most size bytes); the length, or 0 when it does not fit. */
static size_t header_format(char *buf, size_t size, char type, unsigned long long seq, const char *word)
{
        int n = snprintf(buf, size, MAGIC " %c %llu %s\n", type, seq, word);

        return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

/* Splits a received datagram's header line; word points into buf (which gets a NUL). */
static bool header_parse(char *buf, size_t len, char *type, unsigned long long *seq, char **word)
{
        char *nl = memchr(buf, '\n', len), *end;

        if (!nl || len < sizeof(MAGIC) + 4 || memcmp(buf, MAGIC " ", sizeof(MAGIC)) != 0)
                return false;
        *nl = '\0';
        *type = buf[sizeof(MAGIC)];
        if (buf[sizeof(MAGIC) + 1] != ' ')
                return false;
        errno = 0;
        *seq = strtoull(buf + sizeof(MAGIC) + 2, &end, 10);
        if (errno || *end != ' ')
                return false;
        *word = end + 1;
        return true;
}

/* ---- server ---- */

static int run_server(const void *options, const char *token)
{
        const struct options *o = options;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = malloc(MAX_DATAGRAM + 1);
        struct sockaddr_in sa = { .sin_family = AF_INET,
                                  .sin_addr = o->args.bind,
                                  .sin_port = htons(o->args.port) };
        socklen_t len = sizeof(sa);
        char address[INET_ADDRSTRLEN], remote[INET_ADDRSTRLEN] = "", ack[64], bytes[24];
        uint64_t received = 0, largest = 0;
        json_object *line, *result;

        if (!buf)
                return probe_fail("out of memory");
        probe_phase("listening");
        fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return probe_fail("cannot make a UDP socket: %s", strerror(errno));
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return probe_fail("cannot bind UDP %s:%u: %s", inet_ntoa(o->args.bind), o->args.port,
                                  strerror(errno));
        if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
                return probe_fail("cannot read the bound port: %s", strerror(errno));
        inet_ntop(AF_INET, &o->args.bind, address, sizeof(address));
        line = json_object_new_object();
        json_object_object_add(line, "phase", json_object_new_string("listening"));
        json_object_object_add(line, "address", json_object_new_string(address));
        json_object_object_add(line, "port", json_object_new_int(ntohs(sa.sin_port)));
        probe_emit(line);

        probe_phase("running");
        for (;;) {
                struct sockaddr_in from;
                socklen_t from_len = sizeof(from);
                unsigned long long seq;
                char type, *word;
                size_t ack_len;
                ssize_t n = recvfrom(fd, buf, MAX_DATAGRAM, 0, (struct sockaddr *)&from, &from_len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return probe_fail("receiving failed: %s", strerror(errno));
                buf[n] = '\0';
                if (!header_parse(buf, (size_t)n, &type, &seq, &word) ||
                    (token && !probe_token_equal(token, word, strlen(word))))
                        continue; /* a stranger's datagram, or one without the token */
                inet_ntop(AF_INET, &from.sin_addr, remote, sizeof(remote));
                if (type == 'B')
                        break;
                if (type != 'P')
                        continue;
                received++;
                if ((uint64_t)n > largest)
                        largest = (uint64_t)n;
                snprintf(bytes, sizeof(bytes), "%zd", n);
                ack_len = header_format(ack, sizeof(ack), 'A', seq, bytes);
                (void)sendto(fd, ack, ack_len, 0, (struct sockaddr *)&from, from_len);
        }
        result = json_object_new_object();
        json_object_object_add(result, "kind", json_object_new_string("pathmtu"));
        json_object_object_add(result, "ok", json_object_new_boolean(true));
        json_object_object_add(result, "role", json_object_new_string("server"));
        json_object_object_add(result, "received", json_object_new_int64((int64_t)received));
        json_object_object_add(result, "largest_received", json_object_new_int64((int64_t)largest));
        json_object_object_add(result, "local", json_object_new_string(address));
        json_object_object_add(result, "remote", json_object_new_string(remote));
        probe_emit(probe_result_line(result));
        return 0;
}

/* ---- client ---- */

struct client {
        const struct options *o;
        int fd;
        const char *token;
        char *buf;         /* MAX_DATAGRAM + 1 bytes */
        size_t header_min; /* the longest header a probe datagram can have: the floor of the search */
        unsigned long long seq;
        bool icmp;          /* a size came back as ICMP fragmentation-needed */
        uint32_t icmp_size; /* the last size that did */
        unsigned timeouts;  /* sends that got no answer in time */
        int error;          /* what made the search stop, with why */
        char why[PROBE_ERROR_MAX];
};

/* Takes and forgets an error the socket holds from an earlier send (a late ICMP answer). */
static void clear_socket_error(int fd)
{
        int e;
        socklen_t len = sizeof(e);

        (void)getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len);
}

/* Waits up to ms for the acknowledgement of seq: 1 it came, 0 not in time, -EMSGSIZE an ICMP
 * fragmentation-needed came instead, another negative errno when the socket failed. */
static int wait_ack(struct client *c, unsigned long long seq, int ms)
{
        double end = probe_now() + ms / 1000.0;

        for (;;) {
                struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
                double left = end - probe_now();
                unsigned long long got_seq;
                char type, *word;
                ssize_t n;
                int r;

                if (left <= 0)
                        return 0;
                r = poll(&pfd, 1, (int)(left * 1000) + 1);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return 0;
                n = recv(c->fd, c->buf, MAX_DATAGRAM, MSG_DONTWAIT);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0)
                        return -errno;
                c->buf[n] = '\0';
                if (header_parse(c->buf, (size_t)n, &type, &got_seq, &word) && type == 'A' && got_seq == seq)
                        return 1;
        }
}

static int try_size(uint32_t size, void *userdata)
{
        struct client *c = userdata;
        json_object *line;
        int passed = 0;

        for (uint64_t attempt = 0; attempt < c->o->tries && !passed; attempt++) {
                size_t h;
                int r;

                c->seq++;
                h = header_format(c->buf, MAX_DATAGRAM + 1, 'P', c->seq, c->token ? c->token : "");
                memset(c->buf + h, 'p', size - h);
                clear_socket_error(c->fd);
                if (send(c->fd, c->buf, size, 0) < 0) {
                        if (errno == EMSGSIZE)
                                break; /* the local stack will not send it unfragmented */
                        if (errno == ECONNREFUSED) {
                                c->error = -ECONNREFUSED;
                                snprintf(c->why, sizeof(c->why),
                                         "the server's port is closed (ICMP port "
                                         "unreachable): it is not running");
                                return c->error;
                        }
                        c->error = -errno;
                        snprintf(c->why, sizeof(c->why), "sending %u bytes failed: %s", size,
                                 strerror(errno));
                        return c->error;
                }
                r = wait_ack(c, c->seq, (int)c->o->timeout_ms);
                if (r == -EMSGSIZE) {
                        c->icmp = true;
                        c->icmp_size = size;
                        break; /* a hop said it cannot forward this size without fragmenting */
                }
                if (r == -ECONNREFUSED) {
                        c->error = r;
                        snprintf(c->why, sizeof(c->why),
                                 "the server's port is closed (ICMP port unreachable): it is not running");
                        return r;
                }
                if (r < 0) {
                        c->error = r;
                        snprintf(c->why, sizeof(c->why), "waiting for the answer failed: %s", strerror(-r));
                        return r;
                }
                if (r == 0)
                        c->timeouts++;
                passed = r;
        }
        line = json_object_new_object();
        json_object_object_add(line, "phase", json_object_new_string("trying"));
        json_object_object_add(line, "size", json_object_new_int64(size));
        json_object_object_add(line, "passed", json_object_new_boolean(passed));
        probe_emit(line);
        return passed;
}

static int interface_mtu(const char *ifname, uint64_t *mtu)
{
        _cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct ifreq ifr = { 0 };

        if (fd < 0)
                return -errno;
        snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
        if (ioctl(fd, SIOCGIFMTU, &ifr) < 0)
                return -errno;
        *mtu = (uint64_t)ifr.ifr_mtu;
        return 0;
}

static void send_bye(struct client *c)
{
        size_t h = header_format(c->buf, MAX_DATAGRAM + 1, 'B', 0, c->token ? c->token : "");

        for (int i = 0; i < BYE_COPIES; i++)
                (void)send(c->fd, c->buf, h, 0);
}

static int run_client(const void *options, const char *token)
{
        const struct options *o = options;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = malloc(MAX_DATAGRAM + 1);
        struct sockaddr_in local_sa = { .sin_family = AF_INET, .sin_addr = o->args.bind }, remote_sa = {
                .sin_family = AF_INET, .sin_addr = o->args.remote, .sin_port = htons(o->args.port)
        };
        char local[INET_ADDRSTRLEN], remote[INET_ADDRSTRLEN], ifname[IF_NAMESIZE] = "", probe_hdr[256],
                                                              verdict[512];
        struct client c = { .o = o, .token = token, .buf = buf };
        struct pathmtu_search s;
        int mode = IP_PMTUDISC_PROBE, kernel_mtu = 0, r;
        socklen_t len = sizeof(kernel_mtu);
        uint64_t mtu = o->mtu, iface_mtu = 0;
        uint32_t full, floor;
        bool over_checked, over_refused = false;
        json_object *result;

        if (!buf)
                return probe_fail("out of memory");
        probe_phase("connecting");
        fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return probe_fail("cannot make a UDP socket: %s", strerror(errno));
        c.fd = fd;
        if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &mode, sizeof(mode)) < 0)
                return probe_fail("cannot set don't-fragment (IP_MTU_DISCOVER): %s", strerror(errno));
        if (bind(fd, (struct sockaddr *)&local_sa, sizeof(local_sa)) < 0)
                return probe_fail("cannot bind %s: %s", inet_ntoa(o->args.bind), strerror(errno));
        if (connect(fd, (struct sockaddr *)&remote_sa, sizeof(remote_sa)) < 0)
                return probe_fail("no route to %s: %s", o->args.remote_arg, strerror(errno));
        probe_sockname(fd, false, local, sizeof(local));
        probe_sockname(fd, true, remote, sizeof(remote));
        r = probe_netdev_of(local, ifname, sizeof(ifname));
        if (r == 0 && ifname[0])
                r = interface_mtu(ifname, &iface_mtu);
        if (mtu == 0) {
                if (!ifname[0])
                        return probe_fail("cannot tell which interface holds %s to read its MTU%s%s", local,
                                          r < 0 ? ": " : "", r < 0 ? strerror(-r) : "");
                if (r < 0)
                        return probe_fail("cannot read the MTU of %s: %s", ifname, strerror(-r));
                mtu = iface_mtu;
                if (mtu < MIN_MTU || mtu > MAX_MTU)
                        return probe_fail("%s has MTU %llu, outside %d..%d", ifname, (unsigned long long)mtu,
                                          MIN_MTU, MAX_MTU);
        }
        full = (uint32_t)mtu - PATHMTU_HEADER_BYTES;
        /* The header with the largest sequence number a search can reach must fit the floor. */
        c.header_min = header_format(probe_hdr, sizeof(probe_hdr), 'P', 1000000, token ? token : "");
        floor = c.header_min > PATHMTU_FLOOR_BYTES ? (uint32_t)c.header_min : PATHMTU_FLOOR_BYTES;
        if (c.header_min == 0 || floor > full)
                return probe_fail("a probe datagram's header (%zu bytes with the token) does not fit in %u "
                                  "bytes of payload",
                                  c.header_min, full);

        probe_phase("running");
        r = pathmtu_search(floor, full, try_size, &c, &s);
        if (r < 0) {
                send_bye(&c);
                return probe_fail("%s", c.why);
        }
        /* One byte above the interface's MTU - 28 must be refused here: else don't-fragment is not
         * in effect and the sizes above would have been fragmented rather than tested. */
        over_checked = iface_mtu > PATHMTU_HEADER_BYTES && iface_mtu <= MAX_MTU;
        if (over_checked) {
                clear_socket_error(fd);
                over_refused =
                        send(fd, buf, iface_mtu - PATHMTU_HEADER_BYTES + 1, 0) < 0 && errno == EMSGSIZE;
        }
        (void)getsockopt(fd, IPPROTO_IP, IP_MTU, &kernel_mtu, &len);
        send_bye(&c);

        result = json_object_new_object();
        json_object_object_add(result, "kind", json_object_new_string("pathmtu"));
        json_object_object_add(result, "role", json_object_new_string("client"));
        json_object_object_add(result, "local", json_object_new_string(local));
        json_object_object_add(result, "remote", json_object_new_string(remote));
        json_object_object_add(result, "iface", json_object_new_string(ifname));
        json_object_object_add(result, "mtu", json_object_new_int64((int64_t)mtu));
        json_object_object_add(result, "full_payload", json_object_new_int64(full));
        json_object_object_add(result, "largest_payload", json_object_new_int64(s.largest));
        json_object_object_add(result, "path_mtu",
                               json_object_new_int64(s.largest ? s.largest + PATHMTU_HEADER_BYTES : 0));
        if (s.smallest_failed)
                json_object_object_add(result, "smallest_failed", json_object_new_int64(s.smallest_failed));
        json_object_object_add(result, "tries", json_object_new_int64(s.tries));
        json_object_object_add(result, "timeouts", json_object_new_int64(c.timeouts));
        json_object_object_add(result, "icmp", json_object_new_boolean(c.icmp));
        if (over_checked)
                json_object_object_add(result, "over_mtu_refused", json_object_new_boolean(over_refused));
        if (kernel_mtu > 0)
                json_object_object_add(result, "kernel_path_mtu", json_object_new_int(kernel_mtu));
        if (s.largest == full && (!over_checked || over_refused)) {
                json_object_object_add(result, "ok", json_object_new_boolean(true));
                probe_emit(probe_result_line(result));
                return 0;
        }
        if (s.largest == full)
                snprintf(verdict, sizeof(verdict),
                         "a datagram of %llu bytes (one above MTU %llu - 28 of %s) was sent although "
                         "don't-fragment was asked: this path cannot be tested",
                         (unsigned long long)iface_mtu - PATHMTU_HEADER_BYTES + 1,
                         (unsigned long long)iface_mtu, ifname);
        else if (s.largest == 0)
                snprintf(
                        verdict, sizeof(verdict),
                        "path-mtu: not even %u bytes of UDP payload got through to %s (MTU %llu on %s needs "
                        "%u): the server is unreachable or every datagram is dropped",
                        floor, remote, (unsigned long long)mtu, ifname[0] ? ifname : "this side", full);
        else
                snprintf(verdict, sizeof(verdict),
                         "path-mtu: the largest UDP payload that got through to %s with don't-fragment is "
                         "%u bytes (path MTU %u), not the %u that MTU %llu on %s needs; %u bytes %s",
                         remote, s.largest, s.largest + PATHMTU_HEADER_BYTES, full, (unsigned long long)mtu,
                         ifname[0] ? ifname : "this side", s.smallest_failed,
                         c.icmp_size == s.smallest_failed
                                 ? "came back as ICMP fragmentation-needed from a hop"
                                 : "vanished without an ICMP answer (a hop drops them silently)");
        json_object_object_add(result, "ok", json_object_new_boolean(false));
        json_object_object_add(result, "phase", json_object_new_string("running"));
        json_object_object_add(result, "error", json_object_new_string(verdict));
        probe_emit(probe_result_line(result));
        return 1;
}

static const struct probe_helper pathmtu = { "pathmtu", human, &cmdline, run_server, run_client };

int main(int argc, char **argv)
{
        struct options o = { .args.deadline = 60, .timeout_ms = DEFAULT_TIMEOUT, .tries = DEFAULT_TRIES };

        return probe_main(&pathmtu, argc, argv, &o.args, &o);
}
