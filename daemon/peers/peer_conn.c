#include "peer_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent_ssl.h>
#include <linux/sockios.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonrpc.h"
#include "common/proto.h"
#include "daemon/base/clock.h"

uint64_t peer_now_usec(void)
{
        return clock_monotonic_usec();
}

void peer_format_sockaddr(const struct sockaddr_in *sa, char *buf, size_t size)
{
        if (!inet_ntop(AF_INET, &sa->sin_addr, buf, (socklen_t)size))
                snprintf(buf, size, "?");
}

size_t peer_conn_send(struct peer_conn *c, json_object *msg)
{
        size_t len;
        const char *s = jsonrpc_to_string(msg, &len);
        struct evbuffer *out = bufferevent_get_output(c->bev);

        evbuffer_add(out, s, len);
        evbuffer_add(out, "\n", 1);
        json_object_put(msg);
        return len + 1;
}

/* What one read callback handles before it lets the loop serve others: a peer that sends a
 * thousand requests in one burst (each answered with work: a probe request reads the peer
 * table) otherwise held the loop, and the API, for the whole burst. */
#define CONN_READ_BUDGET_LINES 64
#define CONN_READ_BUDGET_USEC  4000

static void conn_on_read(struct bufferevent *bev, void *userdata)
{
        struct peer_conn *c = userdata;
        struct evbuffer *in = bufferevent_get_input(bev);
        uint64_t start = peer_now_usec();

        c->last_rx_usec = start;
        for (unsigned n = 0;; n++) {
                size_t eol_len = 0;
                struct evbuffer_ptr eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
                char *line;
                int r;

                if (eol.pos >= 0 &&
                    (n >= CONN_READ_BUDGET_LINES || peer_now_usec() - start >= CONN_READ_BUDGET_USEC)) {
                        /* The rest on a later turn of the loop, after what else is ready. */
                        bufferevent_trigger(bev, EV_READ,
                                            BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
                        return;
                }
                if (eol.pos < 0) {
                        if (evbuffer_get_length(in) > SPARKD_MAX_LINE)
                                c->ops->on_broken(c, "peer sent a message longer than 64 KiB");
                        return;
                }
                if (eol.pos > SPARKD_MAX_LINE) {
                        c->ops->on_broken(c, "peer sent a message longer than 64 KiB");
                        return;
                }
                line = malloc((size_t)eol.pos + 1);
                if (!line) {
                        c->ops->on_broken(c, "out of memory");
                        return;
                }
                evbuffer_remove(in, line, (size_t)eol.pos);
                evbuffer_drain(in, eol_len);
                line[eol.pos] = '\0';
                r = c->ops->on_line(c, line, (size_t)eol.pos);
                free(line);
                if (r < 0)
                        return;
        }
}

static void conn_on_event(struct bufferevent *bev, short what, void *userdata)
{
        struct peer_conn *c = userdata;
        char why[320];
        unsigned long ssl_err = 0, err;

        if (what & BEV_EVENT_CONNECTED) {
                c->is_tls_up = true;
                c->last_rx_usec = peer_now_usec();
                c->ops->on_connected(c);
                return;
        }
        if (c->is_tls_up) {
                c->ops->on_broken(c, what & BEV_EVENT_EOF ? "the peer closed the connection"
                                                          : "connection error");
                return;
        }
        /* Before the handshake completed: a TLS alert means a peer without our key; anything
         * else (refused, unreachable, reset) is the network. */
        while ((err = bufferevent_get_openssl_error(bev)) != 0)
                if (ERR_GET_LIB(err) == ERR_LIB_SSL && !ssl_err)
                        ssl_err = err;
        if (ssl_err) {
                const char *reason = ERR_reason_error_string(ssl_err);

                /* Only the words: the error code means nothing to the reader. */
                if (reason)
                        snprintf(why, sizeof(why), "TLS: %s", reason);
                else
                        ERR_error_string_n(ssl_err, why, sizeof(why));
        } else if ((what & BEV_EVENT_EOF) && !EVUTIL_SOCKET_ERROR()) {
                ssl_err = 1;
                snprintf(why, sizeof(why), "TLS: closed during the handshake");
        } else {
                snprintf(why, sizeof(why), "cannot connect: %s", strerror(EVUTIL_SOCKET_ERROR()));
        }
        c->ops->on_handshake_failed(c, why, ssl_err != 0);
}

bool peer_conn_host_acks(const struct peer_conn *c, uint64_t within_usec)
{
        struct tcp_info info = { 0 };
        socklen_t len = sizeof(info);
        int fd = c->bev ? bufferevent_getfd(c->bev) : -1, queued = 0;

        /* The send queue holds what is unsent too: with this side's port down nothing is in
         * flight, and nothing is acknowledged either. */
        if (fd < 0 || ioctl(fd, SIOCOUTQ, &queued) < 0 ||
            getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0)
                return false;
        return queued == 0 || (uint64_t)info.tcpi_last_ack_recv * 1000 < within_usec;
}

static void conn_on_deadline(evutil_socket_t fd, short what, void *userdata)
{
        struct peer_conn *c = userdata;

        c->ops->on_deadline(c);
}

int peer_conn_binding(struct peer_conn *c, unsigned char out[PEER_CONN_BINDING_LEN])
{
        SSL *ssl = c->bev ? bufferevent_openssl_get_ssl(c->bev) : NULL;

        if (!c->has_binding) {
                if (!ssl || SSL_export_keying_material(ssl, c->binding, PEER_CONN_BINDING_LEN,
                                                       PEER_CONN_BINDING_LABEL,
                                                       strlen(PEER_CONN_BINDING_LABEL), NULL, 0, 0) != 1)
                        return -EPROTO;
                c->has_binding = true;
        }
        memcpy(out, c->binding, PEER_CONN_BINDING_LEN);
        return 0;
}

struct peer_conn *peer_conn_new(struct event_base *base, SSL_CTX *tls, int fd, bool outbound,
                                const struct peer_conn_ops *ops)
{
        struct peer_conn *c = calloc(1, sizeof(*c));
        SSL *ssl = SSL_new(tls);

        if (!c || !ssl) {
                SSL_free(ssl);
                close(fd);
                free(c);
                return NULL;
        }
        c->bev = bufferevent_openssl_socket_new(
                base, fd, ssl, outbound ? BUFFEREVENT_SSL_CONNECTING : BUFFEREVENT_SSL_ACCEPTING,
                BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
        if (!c->bev) {
                SSL_free(ssl);
                free(c);
                return NULL;
        }
        c->ops = ops;
        c->is_outbound = outbound;
        c->deadline = evtimer_new(base, conn_on_deadline, c);
        bufferevent_setcb(c->bev, conn_on_read, NULL, conn_on_event, c);
        bufferevent_enable(c->bev, EV_READ | EV_WRITE);
        return c;
}

void peer_conn_free(struct peer_conn *c)
{
        if (c->deadline)
                event_free(c->deadline);
        if (c->bev)
                bufferevent_free(c->bev);
        free(c);
}

int peer_conn_connect(struct peer_conn *c, const struct sockaddr_in *remote)
{
        struct sockaddr_in local = { .sin_family = AF_INET };
        socklen_t local_len = sizeof(local);

        if (bufferevent_socket_connect(c->bev, (const struct sockaddr *)remote, sizeof(*remote)) < 0)
                return errno > 0 ? -errno : -EIO;
        if (getsockname(bufferevent_getfd(c->bev), (struct sockaddr *)&local, &local_len) == 0)
                peer_format_sockaddr(&local, c->local, sizeof(c->local));
        return 0;
}

void peer_conn_set_deadline(struct peer_conn *c, unsigned sec)
{
        struct timeval tv = { .tv_sec = sec };

        if (c->deadline)
                evtimer_add(c->deadline, &tv);
}

void peer_conn_clear_deadline(struct peer_conn *c)
{
        if (c->deadline)
                event_del(c->deadline);
}
