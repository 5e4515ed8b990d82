#include "probe_session.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/macro.h"

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
                r = poll(&pfd, 1, probe_wait_ms(PROBE_CONNECT_MS));
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
        r = probe_read_line(fd, line, sizeof(line), probe_wait_ms(PROBE_CONNECT_MS));
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
