#include "probe_common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <math.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "strutil.h"

/* ---- pure ---- */

int probe_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
        return parse_size(s, min, max, out);
}

int probe_parse_seconds(const char *s, double min, double max, double *out)
{
        return parse_double(s, min, max, out);
}

int probe_parse_ipv4(const char *s, struct in_addr *out)
{
        if (!s)
                return -EINVAL;
        if (!*s) {
                out->s_addr = htonl(INADDR_ANY);
                return 0;
        }
        return inet_pton(AF_INET, s, out) == 1 ? 0 : -EINVAL;
}

int probe_opt_uint(const char *name, const char *arg, uint64_t min, uint64_t max, uint64_t *out, char *err,
                   size_t err_size)
{
        int r = parse_uint64(arg, 10, min, max, out);

        if (r < 0)
                snprintf(err, err_size, "%s wants a whole number from %llu to %llu, not '%s'", name,
                         (unsigned long long)min, (unsigned long long)max, arg);
        return r;
}

int probe_opt_size(const char *name, const char *arg, uint64_t min, uint64_t max, uint64_t *out, char *err,
                   size_t err_size)
{
        int r = probe_parse_size(arg, min, max, out);

        if (r < 0)
                snprintf(err, err_size,
                         "%s wants a size in bytes from %llu to %llu (K and M suffixes allowed), not '%s'",
                         name, (unsigned long long)min, (unsigned long long)max, arg);
        return r;
}

int probe_opt_seconds(const char *name, const char *arg, double min, double max, double *out, char *err,
                      size_t err_size)
{
        int r = probe_parse_seconds(arg, min, max, out);

        if (r == 0 && !(*out > 0))
                r = -ERANGE;
        if (r < 0)
                snprintf(err, err_size, "%s wants seconds, more than 0 and at most %g, not '%s'", name, max,
                         arg);
        return r;
}

int probe_opt_ipv4(const char *name, const char *arg, bool allow_any, struct in_addr *out, char *err,
                   size_t err_size)
{
        int r = probe_parse_ipv4(arg, out);

        if (r == 0 && !allow_any && out->s_addr == htonl(INADDR_ANY))
                r = -EINVAL;
        if (r < 0)
                snprintf(err, err_size, "%s wants an IPv4 address like 10.0.0.2, not '%s'", name, arg);
        return r;
}

double probe_gbps(uint64_t bytes, double seconds)
{
        if (!(seconds > 0))
                return 0;
        return (double)bytes * 8 / 1e9 / seconds;
}

double probe_percentile(const double *sorted, size_t n, double p)
{
        size_t rank;

        if (n == 0)
                return 0;
        /* Nearest rank: the smallest sample with at least p% of the samples at or below it. */
        rank = (size_t)ceil(p / 100.0 * (double)n);
        if (rank < 1)
                rank = 1;
        if (rank > n)
                rank = n;
        return sorted[rank - 1];
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

int probe_stats_compute(double *samples, size_t n, struct probe_stats *out)
{
        double sum = 0;

        if (n == 0)
                return -EINVAL;
        qsort(samples, n, sizeof(*samples), cmp_double);
        for (size_t i = 0; i < n; i++)
                sum += samples[i];
        *out = (struct probe_stats){
                .count = n,
                .min = samples[0],
                .median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2,
                .p99 = probe_percentile(samples, n, 99),
                .max = samples[n - 1],
                .mean = sum / (double)n,
        };
        return 0;
}

bool probe_token_equal(const char *expected, const char *got, size_t got_len)
{
        size_t len = strlen(expected);

        if (got_len != len)
                return false;
        return CRYPTO_memcmp(expected, got, len) == 0;
}

int probe_token_from_env(const char **out)
{
        const char *t = getenv(PROBE_TOKEN_ENV);

        *out = NULL;
        if (!t)
                return 0;
        if (!*t || strlen(t) > PROBE_TOKEN_MAX || strpbrk(t, "\r\n"))
                return -EINVAL;
        *out = t;
        return 0;
}

json_object *probe_json_double(double v, int decimals)
{
        char buf[64];

        if (!isfinite(v))
                return NULL;
        snprintf(buf, sizeof(buf), "%.*f", decimals, v);
        /* "-0.0" reads oddly in a result; it can only come from rounding. */
        if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
                memmove(buf, buf + 1, strlen(buf));
        return json_object_new_double_s(strtod(buf, NULL), buf);
}

json_object *probe_result_error(const char *kind, const char *phase, const char *error)
{
        json_object *r = json_object_new_object();

        json_object_object_add(r, "kind", json_object_new_string(kind));
        json_object_object_add(r, "ok", json_object_new_boolean(false));
        json_object_object_add(r, "error", json_object_new_string(error));
        json_object_object_add(r, "phase", json_object_new_string(phase));
        return r;
}

json_object *probe_result_line(json_object *result)
{
        json_object *line = json_object_new_object();

        json_object_object_add(line, "result", result);
        return line;
}

int probe_hello_format(const char *token, const struct probe_hello *hello, char *buf, size_t size,
                       size_t *len)
{
        _cleanup_json_ json_object *h = json_object_new_object();
        int n;

        json_object_object_add(h, "kind", json_object_new_string(hello->kind));
        json_object_object_add(h, "version", json_object_new_int((int)hello->version));
        json_object_object_add(h, "session", json_object_new_string(hello->session));
        json_object_object_add(h, "streams", json_object_new_int((int)hello->streams));
        json_object_object_add(h, "stream", json_object_new_int((int)hello->stream));
        json_object_object_add(h, "size", json_object_new_int64((int64_t)hello->size));
        json_object_object_add(h, "count", json_object_new_int64((int64_t)hello->count));
        if (hello->reverse_ms)
                json_object_object_add(h, "reverse_ms", json_object_new_int64((int64_t)hello->reverse_ms));
        n = snprintf(buf, size, "%s\n%s\n", token ? token : "",
                     json_object_to_json_string_ext(h, JSON_C_TO_STRING_PLAIN));
        if (n < 0 || (size_t)n >= size)
                return -ENOBUFS;
        *len = (size_t)n;
        return 0;
}

static int hello_uint(json_object *h, const char *key, uint64_t max, uint64_t *out)
{
        json_object *v;
        int64_t i;

        if (!json_object_object_get_ex(h, key, &v) || !json_object_is_type(v, json_type_int))
                return -EPROTO;
        i = json_object_get_int64(v);
        if (i < 0 || (uint64_t)i > max)
                return -EPROTO;
        *out = (uint64_t)i;
        return 0;
}

int probe_hello_parse(const char *buf, size_t len, const char *expected_token, struct probe_hello *hello,
                      char *why, size_t why_size)
{
        _cleanup_json_ json_object *h = NULL;
        const char *nl1, *nl2, *s;
        json_object *v;
        uint64_t version, streams, stream;
        char line[PROBE_HELLO_MAX];

        nl1 = memchr(buf, '\n', len);
        if (!nl1)
                return len > PROBE_TOKEN_MAX + 1 ? -EACCES : -EAGAIN;
        /* The token first, before anything a stranger sent is parsed any further. */
        if (expected_token && !probe_token_equal(expected_token, buf, (size_t)(nl1 - buf))) {
                snprintf(why, why_size, nl1 == buf ? "missing token" : "wrong token");
                return -EACCES;
        }
        nl2 = memchr(nl1 + 1, '\n', len - (size_t)(nl1 + 1 - buf));
        if (!nl2)
                return -EAGAIN;
        if ((size_t)(nl2 - nl1 - 1) >= sizeof(line)) {
                snprintf(why, why_size, "hello line too long");
                return -EPROTO;
        }
        memcpy(line, nl1 + 1, (size_t)(nl2 - nl1 - 1));
        line[nl2 - nl1 - 1] = '\0';
        h = json_tokener_parse(line);
        if (!h || !json_object_is_type(h, json_type_object)) {
                snprintf(why, why_size, "hello is not a JSON object");
                return -EPROTO;
        }
        *hello = (struct probe_hello){ 0 };
        if (!json_object_object_get_ex(h, "kind", &v) || !json_object_is_type(v, json_type_string) ||
            strlen(s = json_object_get_string(v)) >= sizeof(hello->kind)) {
                snprintf(why, why_size, "hello without a valid kind");
                return -EPROTO;
        }
        strcpy(hello->kind, s);
        if (hello_uint(h, "version", UINT32_MAX, &version) < 0) {
                snprintf(why, why_size, "hello without a version");
                return -EPROTO;
        }
        hello->version = (unsigned)version;
        if (version != PROBE_PROTO_VERSION) {
                snprintf(why, why_size, "protocol version %u is not supported (this side speaks %u)",
                         hello->version, PROBE_PROTO_VERSION);
                return -EPROTO;
        }
        if (!json_object_object_get_ex(h, "session", &v) || !json_object_is_type(v, json_type_string) ||
            strlen(s = json_object_get_string(v)) >= sizeof(hello->session) || !*s) {
                snprintf(why, why_size, "hello without a valid session");
                return -EPROTO;
        }
        strcpy(hello->session, s);
        if (hello_uint(h, "streams", 1024, &streams) < 0 || streams == 0 ||
            hello_uint(h, "stream", 1023, &stream) < 0 || stream >= streams ||
            hello_uint(h, "size", UINT32_MAX, &hello->size) < 0 ||
            hello_uint(h, "count", UINT32_MAX, &hello->count) < 0) {
                snprintf(why, why_size, "hello with invalid streams, stream, size or count");
                return -EPROTO;
        }
        /* Optional: a client that measures one direction only leaves it out. */
        if (json_object_object_get_ex(h, "reverse_ms", NULL) &&
            hello_uint(h, "reverse_ms", 86400 * 1000, &hello->reverse_ms) < 0) {
                snprintf(why, why_size, "hello with an invalid reverse_ms");
                return -EPROTO;
        }
        hello->streams = (unsigned)streams;
        hello->stream = (unsigned)stream;
        return 0;
}

/* ---- process: output, phases, the deadline ---- */

static struct {
        const char *kind;
        bool is_json;
        probe_human_fn human;
        const char *phase;
        /* What the deadline prints: built ahead for each phase, because a signal handler may not
         * allocate. Two buffers, so the handler never sees one half written. */
        char timeout_line[2][256];
        size_t timeout_len[2];
        volatile sig_atomic_t timeout_idx;
        volatile sig_atomic_t has_result;
        double deadline_at;
} out = { .kind = "probe", .is_json = true, .phase = "setup" };

static void timeout_line_build(void)
{
        int idx = !out.timeout_idx, n;

        if (out.is_json)
                n = snprintf(out.timeout_line[idx], sizeof(out.timeout_line[idx]),
                             "{\"result\":{\"kind\":\"%s\",\"ok\":false,\"error\":\"timeout\",\"phase\":\"%"
                             "s\"}}\n",
                             out.kind, out.phase);
        else
                n = snprintf(out.timeout_line[idx], sizeof(out.timeout_line[idx]),
                             "%s probe failed: timeout (deadline passed in phase %s)\n", out.kind,
                             out.phase);
        out.timeout_len[idx] = n < 0 ? 0 : (size_t)n;
        out.timeout_idx = idx;
}

void probe_output_init(const char *kind, bool force_json, probe_human_fn human)
{
        out.kind = kind;
        out.human = human;
        out.is_json = force_json || !human || !isatty(STDOUT_FILENO);
        timeout_line_build();
}

void probe_phase(const char *phase)
{
        out.phase = phase;
        timeout_line_build();
}

static void on_deadline(int sig)
{
        int idx = out.timeout_idx;

        /* A result is out already: only the exit is left to do. */
        if (!out.has_result) {
                ssize_t n = write(STDOUT_FILENO, out.timeout_line[idx], out.timeout_len[idx]);
                (void)n;
        }
        _exit(1);
}

static void write_line(const char *s, size_t len)
{
        while (len > 0) {
                ssize_t n = write(STDOUT_FILENO, s, len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return;
                s += n;
                len -= (size_t)n;
        }
}

void probe_emit(json_object *line)
{
        sigset_t block, old;
        bool is_result = json_object_object_get_ex(line, "result", NULL);

        /* The deadline must not cut into a line, nor print a second result after this one. */
        sigemptyset(&block);
        sigaddset(&block, SIGALRM);
        pthread_sigmask(SIG_BLOCK, &block, &old);
        if (out.is_json) {
                size_t len;
                const char *s = json_object_to_json_string_length(
                        line, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);
                _cleanup_free_ char *buf = malloc(len + 1);

                if (buf) {
                        memcpy(buf, s, len);
                        buf[len] = '\n';
                        write_line(buf, len + 1);
                }
        } else {
                out.human(line);
                fflush(stdout);
        }
        if (is_result)
                out.has_result = 1;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        json_object_put(line);
}

int probe_usage_error(const char *prog, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "%s: ", prog);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry '%s --help'.\n", prog);
        return 2;
}

int probe_fail(const char *fmt, ...)
{
        char msg[PROBE_ERROR_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        probe_emit(probe_result_line(probe_result_error(out.kind, out.phase, msg)));
        return 1;
}

double probe_now(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int probe_deadline_arm(double seconds)
{
        struct sigaction sa = { .sa_handler = on_deadline };
        struct itimerval it = { 0 };

        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGALRM, &sa, NULL) < 0)
                return -errno;
        it.it_value.tv_sec = (time_t)seconds;
        it.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
        if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
                it.it_value.tv_usec = 1;
        out.deadline_at = probe_now() + seconds;
        if (setitimer(ITIMER_REAL, &it, NULL) < 0)
                return -errno;
        return 0;
}

double probe_deadline_left(void)
{
        double left = out.deadline_at - probe_now();

        return left > 0 ? left : 0;
}

/* Milliseconds for poll: at most max_ms, and never past the deadline. */
static int wait_ms(int max_ms)
{
        double left = probe_deadline_left() * 1000 + 1;

        return left < max_ms ? (int)left : max_ms;
}

/* ---- sockets ---- */

static bool buffer_max_allows(int opt, int bytes)
{
        _cleanup_fclose_ FILE *f = fopen(
                opt == SO_SNDBUF ? "/proc/sys/net/core/wmem_max" : "/proc/sys/net/core/rmem_max", "re");
        long max = 0;

        return f && fscanf(f, "%ld", &max) == 1 && max >= bytes;
}

static void set_buffer(int fd, int force_opt, int opt, int bytes)
{
        /* SO_*BUFFORCE passes net.core.[rw]mem_max, which is often far below what a fast link
         * needs; without CAP_NET_ADMIN the kernel's autotuning (tcp_[rw]mem) is better than a
         * buffer capped at that max, so the plain option is used only when the max is enough. */
        if (setsockopt(fd, SOL_SOCKET, force_opt, &bytes, sizeof(bytes)) < 0 &&
            buffer_max_allows(opt, bytes))
                (void)setsockopt(fd, SOL_SOCKET, opt, &bytes, sizeof(bytes));
}

/* A TCP socket with large buffers where the system allows them, bound to addr:port unless both
 * are zero. */
static int tcp_socket(const struct in_addr *addr, uint16_t port, int buffer_bytes, char *err,
                      size_t err_size)
{
        _cleanup_close_ int fd = -EBADF;
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
        int one = 1;
        char a[INET_ADDRSTRLEN];

        fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                snprintf(err, err_size, "cannot create a TCP socket: %s", strerror(errno));
                return -errno;
        }
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (buffer_bytes > 0) {
                set_buffer(fd, SO_SNDBUFFORCE, SO_SNDBUF, buffer_bytes);
                set_buffer(fd, SO_RCVBUFFORCE, SO_RCVBUF, buffer_bytes);
        }
        if (addr && (addr->s_addr != htonl(INADDR_ANY) || port)) {
                sa.sin_addr = *addr;
                if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                        int r = -errno;

                        snprintf(err, err_size, "cannot bind to %s port %u: %s",
                                 inet_ntop(AF_INET, addr, a, sizeof(a)) ? a : "?", port, strerror(-r));
                        return r;
                }
        }
        return TAKE_FD(fd);
}

int probe_netdev_of(const char *ipv4, char *ifname, size_t size)
{
        struct ifaddrs *list;
        struct in_addr want;
        int r = 0;

        if (size)
                ifname[0] = '\0';
        if (inet_pton(AF_INET, ipv4, &want) != 1)
                return -EINVAL;
        if (getifaddrs(&list) < 0)
                return -errno;
        for (struct ifaddrs *a = list; a; a = a->ifa_next) {
                if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET ||
                    ((struct sockaddr_in *)(void *)a->ifa_addr)->sin_addr.s_addr != want.s_addr)
                        continue;
                if (strlen(a->ifa_name) >= size)
                        r = -ENOBUFS;
                else
                        strcpy(ifname, a->ifa_name);
                break;
        }
        freeifaddrs(list);
        return r;
}

void probe_sockname(int fd, bool peer, char *buf, size_t size)
{
        struct sockaddr_in sa = { 0 };
        socklen_t len = sizeof(sa);

        if ((peer ? getpeername(fd, (struct sockaddr *)&sa, &len)
                  : getsockname(fd, (struct sockaddr *)&sa, &len)) < 0 ||
            !inet_ntop(AF_INET, &sa.sin_addr, buf, (socklen_t)size))
                snprintf(buf, size, "?");
}

int probe_listen(const struct in_addr *addr, uint16_t port, int buffer_bytes, char *err, size_t err_size)
{
        _cleanup_close_ int fd = -EBADF;
        struct sockaddr_in sa = { 0 };
        socklen_t len = sizeof(sa);
        char a[INET_ADDRSTRLEN];
        json_object *line;

        fd = tcp_socket(addr, port, buffer_bytes, err, err_size);
        if (fd < 0)
                return fd;
        if (listen(fd, 128) < 0 || getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
                int r = -errno;

                snprintf(err, err_size, "cannot listen: %s", strerror(-r));
                return r;
        }
        inet_ntop(AF_INET, &sa.sin_addr, a, sizeof(a));
        probe_phase("listening");
        line = json_object_new_object();
        json_object_object_add(line, "phase", json_object_new_string("listening"));
        json_object_object_add(line, "address", json_object_new_string(a));
        json_object_object_add(line, "port", json_object_new_int(ntohs(sa.sin_port)));
        probe_emit(line);
        return TAKE_FD(fd);
}

static int set_blocking(int fd, bool blocking)
{
        int flags = fcntl(fd, F_GETFL);

        if (flags < 0)
                return -errno;
        flags = blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK;
        return fcntl(fd, F_SETFL, flags) < 0 ? -errno : 0;
}

int probe_write_all(int fd, const void *buf, size_t len)
{
        const char *p = buf;

        while (len > 0) {
                ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

int probe_read_line(int fd, char *buf, size_t size, int timeout_ms)
{
        double until = probe_now() + timeout_ms / 1000.0;
        size_t len = 0;

        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                double left = (until - probe_now()) * 1000;
                ssize_t n;
                char c;

                if (left <= 0)
                        return -ETIMEDOUT;
                n = poll(&p, 1, (int)left + 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        continue;
                n = recv(fd, &c, 1, MSG_DONTWAIT);
                if (n < 0 && (errno == EINTR || errno == EAGAIN))
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return -ECONNRESET;
                if (c == '\n') {
                        buf[len] = '\0';
                        return 0;
                }
                if (len + 1 >= size)
                        return -EMSGSIZE;
                buf[len++] = c;
        }
}

struct pending {
        int fd;
        double until;
        size_t len;
        char buf[PROBE_HELLO_MAX];
};

static void answer(int fd, const char *error)
{
        _cleanup_json_ json_object *a = json_object_new_object();
        char line[PROBE_HELLO_MAX];

        json_object_object_add(a, "ok", json_object_new_boolean(!error));
        if (error)
                json_object_object_add(a, "error", json_object_new_string(error));
        snprintf(line, sizeof(line), "%s\n", json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN));
        /* Best effort and never blocking: the answer is short and the socket buffer empty. */
        (void)send(fd, line, strlen(line), MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void pending_drop(struct pending *p, size_t *n, size_t i, const char *error)
{
        if (error)
                answer(p[i].fd, error);
        close(p[i].fd);
        p[i] = p[--*n];
}

#define MAX_PENDING 16

int probe_accept_session(int listen_fd, const char *kind, const char *token, unsigned max_streams, int *fds,
                         struct probe_hello *first, char *err, size_t err_size)
{
        _cleanup_free_ struct pending *p = calloc(MAX_PENDING, sizeof(*p));
        struct pollfd pfd[MAX_PENDING + 1];
        size_t n = 0;
        unsigned have = 0;
        bool started = false;
        int r = 0;

        if (!p) {
                snprintf(err, err_size, "out of memory");
                return -ENOMEM;
        }
        for (unsigned i = 0; i < max_streams; i++)
                fds[i] = -EBADF;
        for (;;) {
                double now = probe_now(), soonest = now + 1;
                int k;

                /* Connections that do not authenticate in time make room for the right one. */
                for (size_t i = 0; i < n;) {
                        if (p[i].until <= now)
                                pending_drop(p, &n, i, NULL);
                        else
                                soonest = p[i].until < soonest ? p[i].until : soonest, i++;
                }
                pfd[0] = (struct pollfd){ .fd = listen_fd, .events = POLLIN };
                for (size_t i = 0; i < n; i++)
                        pfd[i + 1] = (struct pollfd){ .fd = p[i].fd, .events = POLLIN };
                k = poll(pfd, n + 1, (int)((soonest - now) * 1000) + 1);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = -errno;
                        snprintf(err, err_size, "poll failed: %s", strerror(-r));
                        goto fail;
                }
                /* Walk backwards: dropping entry i moves the last one into its place. */
                for (size_t i = n; i-- > 0;) {
                        struct pending *c = &p[i];
                        struct probe_hello h;
                        char why[128] = "";
                        ssize_t got;

                        if (!(pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        got = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, MSG_DONTWAIT);
                        if (got < 0 && (errno == EAGAIN || errno == EINTR))
                                continue;
                        if (got <= 0) {
                                pending_drop(p, &n, i, NULL);
                                continue;
                        }
                        c->len += (size_t)got;
                        r = probe_hello_parse(c->buf, c->len, token, &h, why, sizeof(why));
                        if (r == -EAGAIN && c->len < sizeof(c->buf))
                                continue;
                        if (r == -EAGAIN || r == -EACCES || r == -EPROTO) {
                                pending_drop(p, &n, i,
                                             *why           ? why
                                             : r == -EACCES ? "wrong token"
                                                            : "hello too long");
                                continue;
                        }
                        if (strcmp(h.kind, kind) != 0) {
                                snprintf(why, sizeof(why), "this is a %s probe server, not %s", kind,
                                         h.kind);
                                pending_drop(p, &n, i, why);
                                continue;
                        }
                        if (h.streams > max_streams) {
                                snprintf(why, sizeof(why), "at most %u streams", max_streams);
                                pending_drop(p, &n, i, why);
                                continue;
                        }
                        if (started &&
                            (strcmp(h.session, first->session) != 0 || h.streams != first->streams)) {
                                pending_drop(p, &n, i, "busy with another client");
                                continue;
                        }
                        if (started && fds[h.stream] >= 0) {
                                pending_drop(p, &n, i, "stream already connected");
                                continue;
                        }
                        if (set_blocking(c->fd, true) < 0) {
                                pending_drop(p, &n, i, NULL);
                                continue;
                        }
                        if (!started)
                                *first = h;
                        started = true;
                        answer(c->fd, NULL);
                        fds[h.stream] = c->fd;
                        p[i] = p[--n];
                        if (++have == first->streams) {
                                while (n > 0)
                                        pending_drop(p, &n, n - 1, "busy with another client");
                                return 0;
                        }
                }
                if (pfd[0].revents & POLLIN) {
                        int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

                        if (fd < 0)
                                continue;
                        if (n == MAX_PENDING) { /* the oldest gives way */
                                size_t oldest = 0;

                                for (size_t i = 1; i < n; i++)
                                        if (p[i].until < p[oldest].until)
                                                oldest = i;
                                pending_drop(p, &n, oldest, NULL);
                        }
                        p[n++] = (struct pending){ .fd = fd,
                                                   .until = probe_now() + PROBE_AUTH_TIMEOUT_MS / 1000.0 };
                }
        }
fail:
        while (n > 0)
                pending_drop(p, &n, n - 1, NULL);
        for (unsigned i = 0; i < max_streams; i++)
                if (fds[i] >= 0)
                        close(fds[i]), fds[i] = -EBADF;
        return r;
}

int probe_connect(const struct in_addr *bind_addr, const struct in_addr *addr, uint16_t port,
                  int buffer_bytes, const char *token, const struct probe_hello *hello, char *err,
                  size_t err_size)
{
        _cleanup_close_ int fd = -EBADF;
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr = *addr };
        char a[INET_ADDRSTRLEN], buf[PROBE_HELLO_MAX], line[PROBE_HELLO_MAX];
        _cleanup_json_ json_object *ans = NULL;
        json_object *v;
        struct pollfd pfd;
        size_t len;
        socklen_t sl = sizeof(int);
        int r, soerr = 0;

        inet_ntop(AF_INET, addr, a, sizeof(a));
        fd = tcp_socket(bind_addr, 0, buffer_bytes, err, err_size);
        if (fd < 0)
                return fd;
        if ((r = set_blocking(fd, false)) < 0) {
                snprintf(err, err_size, "cannot set up the socket: %s", strerror(-r));
                return r;
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
                r = -errno;
                goto connect_failed;
        }
        pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
        do
                r = poll(&pfd, 1, wait_ms(PROBE_CONNECT_MS));
        while (r < 0 && errno == EINTR);
        if (r == 0) {
                snprintf(err, err_size, "connecting to %s port %u timed out", a, port);
                return -ETIMEDOUT;
        }
        if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0) {
                r = -errno;
                goto connect_failed;
        }
        if (soerr) {
                r = -soerr;
                goto connect_failed;
        }
        if ((r = set_blocking(fd, true)) < 0 ||
            (r = probe_hello_format(token, hello, buf, sizeof(buf), &len)) < 0 ||
            (r = probe_write_all(fd, buf, len)) < 0) {
                snprintf(err, err_size, "cannot send the handshake to %s port %u: %s", a, port,
                         strerror(-r));
                return r;
        }
        r = probe_read_line(fd, line, sizeof(line), wait_ms(PROBE_CONNECT_MS));
        if (r == -ETIMEDOUT) {
                snprintf(err, err_size, "the server at %s port %u did not answer the handshake", a, port);
                return r;
        }
        if (r < 0) {
                snprintf(err, err_size,
                         "the server at %s port %u closed the connection during the handshake (%s); is it a "
                         "sparkd probe server?",
                         a, port, r == -ECONNRESET ? "no answer" : strerror(-r));
                return r;
        }
        ans = json_tokener_parse(line);
        if (!ans || !json_object_object_get_ex(ans, "ok", &v)) {
                snprintf(err, err_size,
                         "the server at %s port %u answered the handshake with something else", a, port);
                return -EPROTO;
        }
        if (!json_object_get_boolean(v)) {
                const char *why =
                        json_object_object_get_ex(ans, "error", &v) ? json_object_get_string(v) : "?";

                if (!token && (strcmp(why, "missing token") == 0 || strcmp(why, "wrong token") == 0))
                        snprintf(err, err_size,
                                 "the server requires a token: set " PROBE_TOKEN_ENV
                                 " to the same value on both sides");
                else if (strcmp(why, "wrong token") == 0 || strcmp(why, "missing token") == 0)
                        snprintf(err, err_size,
                                 "the server refused the connection: wrong token (" PROBE_TOKEN_ENV
                                 " must be the same on both sides)");
                else
                        snprintf(err, err_size, "the server refused the connection: %.160s", why);
                return -EACCES;
        }
        return TAKE_FD(fd);

connect_failed:
        if (r == -ECONNREFUSED)
                snprintf(err, err_size,
                         "connection to %s port %u refused: is the probe server running there?", a, port);
        else
                snprintf(err, err_size, "cannot connect to %s port %u: %s", a, port, strerror(-r));
        return r;
}

void probe_session_id(char *buf, size_t size)
{
        uint64_t v = 0;

        if (getrandom(&v, sizeof(v), 0) != sizeof(v))
                v = (uint64_t)getpid() ^ (uint64_t)(probe_now() * 1e9);
        snprintf(buf, size, "%016llx", (unsigned long long)v);
}
