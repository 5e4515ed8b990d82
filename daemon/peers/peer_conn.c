#include "peer_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
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
#include "common/macro.h"
#include "common/proto.h"
#include "daemon/base/clock.h"
#include "daemon/base/socket_flush.h"
#include "peer_tls.h"

uint64_t peer_now_usec(void)
{
        return clock_monotonic_usec();
}

void peer_format_sockaddr(const struct sockaddr_in *sa, char *buf, size_t size)
{
        if (!inet_ntop(AF_INET, &sa->sin_addr, buf, (socklen_t)size))
                snprintf(buf, size, "?");
}

/* Ends c from the loop, not from inside its owner's call: a record that cannot be sealed is
 * found while the owner sends. */
static void conn_fail_later(struct peer_conn *c, const char *why)
{
        if (!c->failure) {
                c->failure = why;
                bufferevent_trigger_event(c->bev, BEV_EVENT_ERROR, BEV_TRIG_DEFER_CALLBACKS);
        }
}

size_t peer_conn_send(struct peer_conn *c, json_object *msg)
{
        size_t len;
        const char *s = jsonrpc_to_string(msg, &len);
        const struct iovec iov[] = { { .iov_base = (void *)s, .iov_len = len },
                                     { .iov_base = "\n", .iov_len = 1 } };
        int r = -ENOTCONN;

        if (c->is_handshake_done && !c->failure)
                r = peer_records_seal(&c->records, iov, ARRAY_SIZE(iov), bufferevent_get_output(c->bev));
        if (r == -EOVERFLOW)
                conn_fail_later(c, "its key sealed as many records as it may: the connection is made anew");
        else if (r < 0)
                conn_fail_later(c, "a record could not be sealed");
        else
                (void)socket_flush_now(c->bev); /* as TLS wrote a record: not a turn later */
        json_object_put(msg);
        return len + 1;
}

/* What one read callback handles before it lets the loop serve others: a peer that sends a
 * thousand requests in one burst (each answered with work: a probe request reads the peer
 * table) otherwise held the loop, and the API, for the whole burst. */
#define CONN_READ_BUDGET_LINES 64
#define CONN_READ_BUDGET_USEC  4000

/* The lines of what the peer's records carried, a budget of them at a time. */
static void conn_read_lines(struct peer_conn *c)
{
        struct evbuffer *in = c->plain;
        uint64_t start = peer_now_usec();

        for (unsigned n = 0;; n++) {
                size_t eol_len = 0;
                struct evbuffer_ptr eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
                char *line;
                int r;

                if (eol.pos >= 0 &&
                    (n >= CONN_READ_BUDGET_LINES || peer_now_usec() - start >= CONN_READ_BUDGET_USEC)) {
                        /* The rest on a later turn of the loop, after what else is ready. */
                        bufferevent_trigger(c->bev, EV_READ,
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

/* The handshake failed in TLS: its alert, if it made one, went out with handshake_flush (the
 * owner closes c in the call, and what is queued then is lost), and the owner hears OpenSSL's
 * words. */
static void handshake_failed(struct peer_conn *c)
{
        unsigned long err, ssl_err = 0;
        char why[320];
        bool is_refused = true;

        while ((err = ERR_get_error()) != 0)
                if (ERR_GET_LIB(err) == ERR_LIB_SSL && !ssl_err)
                        ssl_err = err;
        if (ERR_GET_REASON(ssl_err) == SSL_R_NO_APPLICATION_PROTOCOL ||
            ERR_GET_REASON(ssl_err) == SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL) {
                /* Keyed, but of another version: not the key mismatch a refusal reads as. */
                snprintf(
                        why, sizeof(why),
                        "the peer speaks another version of the peer channel than this sparkd's %s: run one "
                        "sparkd version on every node",
                        PEER_TLS_ALPN);
                is_refused = false;
        } else if (ssl_err) {
                const char *reason = ERR_reason_error_string(ssl_err);

                /* Only the words: the error code means nothing to the reader. */
                if (reason)
                        snprintf(why, sizeof(why), "TLS: %s", reason);
                else
                        ERR_error_string_n(ssl_err, why, sizeof(why));
        } else {
                snprintf(why, sizeof(why), "TLS: the handshake failed");
        }
        c->ops->on_handshake_failed(c, why, is_refused);
}

/* The handshake's bytes for the peer, from OpenSSL's buffer to the connection's, and written in
 * this turn of the loop (socket_flush.h) as TLS wrote them: under load a turn is tens of ms, and
 * the hello deadline counts the three flights. */
static void handshake_flush(struct peer_conn *c)
{
        BIO *out = SSL_get_wbio(c->handshake);
        char *data;
        long len = BIO_get_mem_data(out, &data);

        if (len > 0) {
                evbuffer_add(bufferevent_get_output(c->bev), data, (size_t)len);
                (void)BIO_reset(out);
                (void)socket_flush_now(c->bev);
        }
}

/* The handshake is complete: the keys for the records are taken from it, and it is freed. */
static int handshake_done(struct peer_conn *c)
{
        SSL *ssl = c->handshake;
        int r;

        if (!peer_tls_agreed_version(ssl)) {
                char why[320];

                snprintf(why, sizeof(why),
                         "the peer's sparkd is of a version before this one's peer channel (%s): run one "
                         "sparkd version on every node",
                         PEER_TLS_ALPN);
                c->ops->on_handshake_failed(c, why, false);
                return -EPROTO;
        }
        r = peer_records_derive(&c->records, ssl, c->is_outbound, peer_tls_record_cipher(c->tls));
        if (r >= 0 &&
            SSL_export_keying_material(ssl, c->binding, PEER_CONN_BINDING_LEN, PEER_CONN_BINDING_LABEL,
                                       strlen(PEER_CONN_BINDING_LABEL), NULL, 0, 0) != 1)
                r = -EPROTO;
        if (r < 0) {
                c->ops->on_handshake_failed(c, "TLS: no keys could be exported from the handshake", false);
                return r;
        }
        c->plain = evbuffer_new();
        if (!c->plain) {
                c->ops->on_handshake_failed(c, "out of memory", false);
                return -ENOMEM;
        }
        SSL_free(ssl);
        c->handshake = NULL;
        c->is_handshake_done = true;
        c->last_rx_usec = peer_now_usec();
        /* Records that came with the handshake's last are read on the loop's next turn: the owner
         * may end c in its call. */
        if (evbuffer_get_length(bufferevent_get_input(c->bev)))
                bufferevent_trigger(c->bev, EV_READ, BEV_TRIG_IGNORE_WATERMARKS | BEV_TRIG_DEFER_CALLBACKS);
        c->ops->on_connected(c);
        return 1;
}

/* One step of the handshake: 0 while it waits for the peer, 1 done, < 0 failed (the owner told). */
static int handshake_step(struct peer_conn *c)
{
        int r;

        /* The thread's error queue may hold what another OpenSSL call left there: a failure here
         * is told by its own reasons only. */
        ERR_clear_error();
        r = SSL_do_handshake(c->handshake);

        handshake_flush(c);
        if (r == 1)
                return handshake_done(c);
        if (SSL_get_error(c->handshake, r) == SSL_ERROR_WANT_READ)
                return 0;
        handshake_failed(c);
        return -EPROTO;
}

/* A TLS record's most bytes after its header (RFC 8446 5.2). */
#define TLS_MAX_RECORD_BODY (16384 + 256)

/* The peer's TLS records go to the handshake one at a time, so that none of the records that
 * follow it, sealed as peer_record.h says, is taken for TLS. */
static int handshake_feed(struct peer_conn *c)
{
        struct evbuffer *in = bufferevent_get_input(c->bev);

        for (;;) {
                unsigned char h[5];
                size_t len;
                int r;

                if (evbuffer_copyout(in, h, sizeof(h)) < (ev_ssize_t)sizeof(h))
                        return 0;
                len = (size_t)h[3] << 8 | h[4];
                /* A record's type (change_cipher_spec to application_data) and version 3.x: what is
                 * not TLS is refused at once, not waited for until the deadline. */
                if (h[0] < 20 || h[0] > 23 || h[1] != 3 || len > TLS_MAX_RECORD_BODY) {
                        c->ops->on_handshake_failed(c, "TLS: the peer sent no TLS record", true);
                        return -EPROTO;
                }
                if (evbuffer_get_length(in) < sizeof(h) + len)
                        return 0;
                if (BIO_write(SSL_get_rbio(c->handshake), evbuffer_pullup(in, (ev_ssize_t)(sizeof(h) + len)),
                              (int)(sizeof(h) + len)) != (int)(sizeof(h) + len)) {
                        c->ops->on_handshake_failed(c, "out of memory", false);
                        return -ENOMEM;
                }
                evbuffer_drain(in, sizeof(h) + len);
                r = handshake_step(c);
                if (r != 0)
                        return r;
        }
}

static void conn_on_read(struct bufferevent *bev, void *userdata)
{
        struct peer_conn *c = userdata;
        int r;

        c->last_rx_usec = peer_now_usec();
        if (!c->is_handshake_done) {
                /* Done or not, the owner has been called, or nothing is to read yet. */
                (void)handshake_feed(c);
                return;
        }
        r = peer_records_open(&c->records, bufferevent_get_input(bev), c->plain);
        if (r == -EMSGSIZE) {
                c->ops->on_broken(c, "peer sent a record longer than 16 KiB");
                return;
        }
        if (r == -EOVERFLOW) {
                c->ops->on_broken(
                        c, "the peer's key sealed as many records as it may: the connection is made anew");
                return;
        }
        if (r < 0) {
                c->ops->on_broken(c, r == -ENOMEM ? "out of memory"
                                                  : "peer sent a record not sealed with this session's key");
                return;
        }
        conn_read_lines(c);
}

static void conn_on_event(struct bufferevent *bev, short what, void *userdata)
{
        struct peer_conn *c = userdata;
        char why[320];

        if (what & BEV_EVENT_CONNECTED) {
                /* The TCP connection of a dial: the client speaks first. */
                c->last_rx_usec = peer_now_usec();
                c->ops->on_dialled(c);
                (void)handshake_step(c);
                return;
        }
        if (c->failure) {
                c->ops->on_broken(c, c->failure);
                return;
        }
        if (c->is_handshake_done) {
                c->ops->on_broken(c, what & BEV_EVENT_EOF ? "the peer closed the connection"
                                                          : "connection error");
                return;
        }
        /* Before the handshake completed: anything but a closed connection (refused, unreachable,
         * reset) is the network; a peer that closes it has refused this one's TLS. */
        if ((what & BEV_EVENT_EOF) && !EVUTIL_SOCKET_ERROR()) {
                c->ops->on_handshake_failed(c, "TLS: closed during the handshake", true);
                return;
        }
        c->connect_error = EVUTIL_SOCKET_ERROR();
        snprintf(why, sizeof(why), "cannot connect: %s", strerror(c->connect_error));
        c->ops->on_handshake_failed(c, why, false);
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
        if (!c->is_handshake_done)
                return -EPROTO;
        memcpy(out, c->binding, PEER_CONN_BINDING_LEN);
        return 0;
}

struct peer_conn *peer_conn_new(struct event_base *base, SSL_CTX *tls, int fd, bool outbound,
                                const struct peer_conn_ops *ops)
{
        struct peer_conn *c = calloc(1, sizeof(*c));
        SSL *ssl = SSL_new(tls);
        BIO *from_peer = BIO_new(BIO_s_mem()), *to_peer = BIO_new(BIO_s_mem());

        if (!c || !ssl || !from_peer || !to_peer) {
                BIO_free(from_peer);
                BIO_free(to_peer);
                SSL_free(ssl);
                close(fd);
                free(c);
                return NULL;
        }
        /* OpenSSL sees only the handshake's bytes, which the connection hands it (handshake_feed):
         * what follows is not TLS's to read. */
        SSL_set_bio(ssl, from_peer, to_peer);
        if (outbound)
                SSL_set_connect_state(ssl);
        else
                SSL_set_accept_state(ssl);
        /* Callbacks run from the socket's event, not deferred: the handshake's steps are taken
         * in them, as bufferevent_openssl took them in its own. Deferred, they wait their turn
         * (libevent runs 32 a turn, the rest a turn later) inside the hello deadline. What must
         * not run inside a call is asked for deferred (bufferevent_trigger*). */
        c->bev = bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
        if (!c->bev) {
                SSL_free(ssl);
                close(fd);
                free(c);
                return NULL;
        }
        /* The records' cipher is the context's: held while c is. */
        SSL_CTX_up_ref(tls);
        c->tls = tls;
        c->handshake = ssl;
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
        SSL_free(c->handshake);
        SSL_CTX_free(c->tls);
        if (c->plain)
                evbuffer_free(c->plain);
        peer_records_clear(&c->records);
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
