#include "peers.h"

#include <arpa/inet.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/dns.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "config.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"
#include "discovery.h"
#include "peer_internal.h"
#include "peer_tls.h"

void peer_conn_send(struct peer_conn *c, json_object *msg)
{
        size_t len;
        const char *s = jsonrpc_to_string(msg, &len);
        struct evbuffer *out = bufferevent_get_output(c->bev);

        evbuffer_add(out, s, len);
        evbuffer_add(out, "\n", 1);
        json_object_put(msg);
}

static json_object *message_new(struct peers *ps, const char *type)
{
        json_object *m = json_object_new_object();

        json_object_object_add(m, "type", json_object_new_string(type));
        json_object_object_add(m, "ports", peer_local_ports(ps));
        return m;
}

static void conn_send_hello(struct peer_conn *c)
{
        struct peers *ps = c->owner;
        json_object *m = message_new(ps, "hello");

        json_object_object_add(m, "proto", json_object_new_int(PEER_PROTO));
        json_object_object_add(m, "node_id", json_object_new_string(ps->node_id));
        json_object_object_add(m, "name", json_object_new_string(ps->name));
        json_object_object_add(m, "version", json_object_new_string(SPARKD_VERSION));
        json_object_object_add(m, "key_id", json_object_new_string(ps->key_id));
        peer_conn_send(c, m);
}

void peer_conn_free(struct peer_conn *c)
{
        if (c->deadline)
                event_free(c->deadline);
        if (c->bev)
                bufferevent_free(c->bev);
        if (!c->is_outbound && !c->is_hello_done)
                c->owner->n_pending--;
        LIST_REMOVE(c, link);
        free(c);
}

void peer_conn_close(struct peer_conn *c, const char *reason)
{
        struct peer *p = c->peer;

        if (p && p->dialing == c)
                p->dialing = NULL;
        if (p && p->conn == c) {
                p->conn = NULL;
                if (reason) {
                        struct log_field f[] = { { "peer", peer_label(p) },
                                                 { "peer_id", p->node_id },
                                                 { "address", p->via_remote },
                                                 { "iface", p->via_ifname } };

                        snprintf(p->last_error, sizeof(p->last_error), "%s", reason);
                        event_emit(EVENT_PEER_DOWN, f, ARRAY_SIZE(f), "peer %s is down: %s", peer_label(p),
                                   reason);
                }
                peer_set_state(p, PEER_DOWN);
        }
        peer_conn_free(c);
        if (p && !p->conn && !p->is_self)
                peer_schedule_retry(p);
}

/* The peer may have sent on the old connection before its own hello on the new one told it of
 * the switch: the old one is read a while longer and then closed quietly. */
static void conn_retire(struct peer_conn *old)
{
        struct timeval tv = { .tv_sec = RETIRE_GRACE_SEC };

        old->is_retiring = true;
        if (old->deadline)
                evtimer_add(old->deadline, &tv);
}

/* A static entry not yet connected that dials this address: an inbound connection from it
 * fills that entry instead of making a second one, which would dial again later. */
static struct peer *peer_find_unnamed_by_address(struct peers *ps, const char *address)
{
        struct peer *p;

        LIST_FOREACH(p, &ps->peers, link)
                if (!p->node_id[0] && !p->conn && strv_contains(p->addresses, address))
                        return p;
        return NULL;
}

static int conn_handle_hello(struct peer_conn *c, json_object *m)
{
        struct peers *ps = c->owner;
        json_object *v, *ports = NULL;
        const char *node_id = NULL, *name = NULL, *version = NULL;
        struct peer *p, *existing;

        if (!json_object_object_get_ex(m, "proto", &v) || json_object_get_int(v) < 1 ||
            jsonrpc_param_string(m, "node_id", &node_id) <= 0 || strlen(node_id) != 32 ||
            strspn(node_id, "0123456789abcdef") != 32 || jsonrpc_param_string(m, "name", &name) <= 0 ||
            strlen(name) == 0 || strlen(name) > 63)
                return -EBADMSG;
        (void)jsonrpc_param_string(m, "version", &version);
        if (json_object_object_get_ex(m, "ports", &ports) && !json_object_is_type(ports, json_type_array))
                return -EBADMSG;

        if (strcmp(node_id, ps->node_id) == 0) {
                if (c->peer && c->peer->static_spec) {
                        c->peer->is_self = true;
                        snprintf(c->peer->last_error, sizeof(c->peer->last_error),
                                 "this is the node itself");
                }
                return -ELOOP;
        }

        existing = peer_find_by_id(ps, node_id);
        p = c->peer;
        if (p && existing && existing != p) {
                /* A static address that belongs to a peer already known by its id. */
                peer_merge(existing, p);
                if (p->dialing == c)
                        p->dialing = NULL;
                peer_free(p);
                p = existing;
                if (!p->dialing)
                        p->dialing = c;
        } else if (!p) {
                p = existing ? existing : peer_find_unnamed_by_address(ps, c->remote);
                if (!p)
                        p = peer_new(ps);
                if (!p)
                        return -ENOMEM;
        }
        c->peer = p;
        snprintf(p->node_id, sizeof(p->node_id), "%s", node_id);
        snprintf(p->name, sizeof(p->name), "%s", name);
        snprintf(p->version, sizeof(p->version), "%s", version ? version : "?");
        json_object_put(p->ports);
        p->ports = json_object_get(ports);
        if (!c->is_outbound && !strv_contains(p->addresses, c->remote))
                (void)strv_push(&p->addresses, c->remote);

        /* Both ends may have dialled: keep the connection the lower node id started, on both. */
        if (p->conn && p->conn != c) {
                const char *mine = c->is_outbound ? ps->node_id : node_id;
                const char *theirs = p->conn->is_outbound ? ps->node_id : node_id;

                if (strcmp(mine, theirs) >= 0) {
                        if (p->dialing == c)
                                p->dialing = NULL;
                        c->peer = NULL;
                        return -EALREADY;
                }
                conn_retire(p->conn);
                p->conn = NULL;
        }
        if (p->dialing == c)
                p->dialing = NULL;
        if (!c->is_outbound)
                ps->n_pending--;
        c->is_hello_done = true;
        event_del(c->deadline);
        p->conn = c;
        p->backoff_ms = BACKOFF_MIN_MS;
        p->last_error[0] = '\0';
        snprintf(p->via_local, sizeof(p->via_local), "%s", c->local);
        snprintf(p->via_remote, sizeof(p->via_remote), "%s", c->remote);
        peer_check_mtu(p);
        if (p->state != PEER_UP) {
                struct log_field f[] = { { "peer", p->name },
                                         { "peer_id", p->node_id },
                                         { "address", c->remote },
                                         { "iface", p->via_ifname } };

                peer_set_state(p, PEER_UP);
                event_emit(EVENT_PEER_UP, f, ARRAY_SIZE(f), "peer %s (%s) is up via %s%s%s", p->name,
                           c->remote, p->via_ifname[0] ? p->via_ifname : c->local,
                           p->version[0] ? ", sparkd " : "", p->version);
        }
        return 0;
}

static int conn_handle_line(struct peer_conn *c, const char *line, size_t len)
{
        json_tokener *tok = json_tokener_new();
        json_object *m = json_tokener_parse_ex(tok, line, (int)len), *ports = NULL;
        const char *type = NULL;
        int r = 0;

        json_tokener_free(tok);
        if (!m || !json_object_is_type(m, json_type_object) || jsonrpc_param_string(m, "type", &type) <= 0) {
                json_object_put(m);
                return -EBADMSG;
        }
        if (strcmp(type, "hello") == 0) {
                r = c->is_hello_done ? -EPROTO : conn_handle_hello(c, m);
        } else if (!c->is_hello_done) {
                r = -EPROTO;
        } else if (strcmp(type, "heartbeat") == 0) {
                if (json_object_object_get_ex(m, "ports", &ports) &&
                    !json_object_is_type(ports, json_type_array))
                        r = -EBADMSG;
                else if (ports && c->peer && !c->is_retiring) {
                        /* A retiring connection's heartbeat may predate the hello that replaced it. */
                        json_object_put(c->peer->ports);
                        c->peer->ports = json_object_get(ports);
                        peer_check_mtu(c->peer);
                }
        } else if (c->peer && c->owner->on_message)
                c->owner->on_message(c->peer->node_id, type, m, c->owner->on_message_userdata);
        /* Types nobody handles belong to later protocol versions: ignored, not fatal. */
        json_object_put(m);
        return r;
}

int peer_conn_receive(struct peer_conn *c, const char *line, size_t len)
{
        int r = conn_handle_line(c, line, len);

        if (r == -EALREADY || r == -ELOOP) {
                peer_conn_close(c, NULL);
                return r;
        }
        if (r < 0) {
                if (!c->peer)
                        peer_log_inbound_reject(c->owner, c->remote, "not the sparkd peer protocol");
                peer_conn_close(c, "protocol error");
                return r;
        }
        return 0;
}

static void conn_on_read(struct bufferevent *bev, void *userdata)
{
        struct peer_conn *c = userdata;
        struct evbuffer *in = bufferevent_get_input(bev);

        c->last_rx_usec = peer_now_usec();
        for (;;) {
                size_t eol_len = 0;
                struct evbuffer_ptr eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
                char *line;
                int r;

                if (eol.pos < 0) {
                        if (evbuffer_get_length(in) > SPARKD_MAX_LINE)
                                peer_conn_close(c, "peer sent a message longer than 64 KiB");
                        return;
                }
                if (eol.pos > SPARKD_MAX_LINE) {
                        peer_conn_close(c, "peer sent a message longer than 64 KiB");
                        return;
                }
                line = malloc((size_t)eol.pos + 1);
                if (!line) {
                        peer_conn_close(c, "out of memory");
                        return;
                }
                evbuffer_remove(in, line, (size_t)eol.pos);
                evbuffer_drain(in, eol_len);
                line[eol.pos] = '\0';
                r = peer_conn_receive(c, line, (size_t)eol.pos);
                free(line);
                if (r < 0)
                        return;
        }
}

static void conn_on_event(struct bufferevent *bev, short what, void *userdata)
{
        struct peer_conn *c = userdata;
        struct peer *p = c->peer;
        char why[320], tls_error[128] = "";
        unsigned long ssl_err = 0, err;

        if (what & BEV_EVENT_CONNECTED) {
                c->is_tls_up = true;
                c->last_rx_usec = peer_now_usec();
                conn_send_hello(c);
                return;
        }
        if (c->is_tls_up) {
                peer_conn_close(c, what & BEV_EVENT_EOF ? "the peer closed the connection"
                                                        : "connection error");
                return;
        }
        /* Before the handshake completed: a TLS alert means a peer without our key; anything
         * else (refused, unreachable, reset) is the network. */
        while ((err = bufferevent_get_openssl_error(bev)) != 0)
                if (ERR_GET_LIB(err) == ERR_LIB_SSL && !ssl_err)
                        ssl_err = err;
        if (ssl_err) {
                ERR_error_string_n(ssl_err, tls_error, sizeof(tls_error));
                snprintf(why, sizeof(why),
                         "TLS handshake failed (%s): it does not have this cluster's key, or is not sparkd",
                         tls_error);
        } else if ((what & BEV_EVENT_EOF) && !EVUTIL_SOCKET_ERROR()) {
                ssl_err = 1;
                snprintf(why, sizeof(why),
                         "closed during the TLS handshake: it does not have this cluster's key, or is not "
                         "sparkd");
        } else {
                snprintf(why, sizeof(why), "cannot connect: %s", strerror(EVUTIL_SOCKET_ERROR()));
        }
        if (!c->is_outbound) {
                peer_log_inbound_reject(c->owner, c->remote, why);
                peer_conn_close(c, NULL);
                return;
        }
        if (p && ssl_err) {
                struct log_field f[] = { { "peer", peer_label(p) }, { "address", c->remote } };

                if (p->state != PEER_REJECTED)
                        event_emit(EVENT_PEER_REJECTED, f, ARRAY_SIZE(f), "peer %s (%s) rejected: %s",
                                   peer_label(p), c->remote, why);
                peer_set_state(p, PEER_REJECTED);
                /* Nothing learned from it: no id, no name, no ports. */
        } else if (p && p->state != PEER_REJECTED) {
                peer_set_state(p, p->state == PEER_UP ? PEER_UP : PEER_DOWN);
        }
        if (p)
                snprintf(p->last_error, sizeof(p->last_error), "%s", why);
        peer_conn_close(c, NULL);
}

static void conn_on_deadline(evutil_socket_t fd, short what, void *userdata)
{
        struct peer_conn *c = userdata;

        if (c->is_retiring) {
                peer_conn_close(c, NULL);
                return;
        }
        if (!c->is_outbound)
                peer_log_inbound_reject(c->owner, c->remote, "no TLS handshake and hello within 5 s");
        else if (c->peer) {
                snprintf(c->peer->last_error, sizeof(c->peer->last_error), "no hello within %d s",
                         HELLO_TIMEOUT_SEC);
                if (c->peer->state == PEER_CONNECTING)
                        peer_set_state(c->peer, PEER_DOWN);
        }
        peer_conn_close(c, NULL);
}

struct peer_conn *peer_conn_new(struct peers *ps, int fd, bool outbound, struct peer *p)
{
        struct peer_conn *c = calloc(1, sizeof(*c));
        SSL *ssl = SSL_new(ps->tls);
        struct timeval tv = { .tv_sec = HELLO_TIMEOUT_SEC };

        if (!c || !ssl)
                goto fail;
        c->bev = bufferevent_openssl_socket_new(
                ps->base, fd, ssl, outbound ? BUFFEREVENT_SSL_CONNECTING : BUFFEREVENT_SSL_ACCEPTING,
                BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS);
        if (!c->bev) {
                SSL_free(ssl);
                goto fail_nofd;
        }
        ssl = NULL;
        c->owner = ps;
        c->peer = p;
        c->is_outbound = outbound;
        c->deadline = evtimer_new(ps->base, conn_on_deadline, c);
        LIST_INSERT_HEAD(&ps->conns, c, link);
        if (!outbound)
                ps->n_pending++;
        bufferevent_setcb(c->bev, conn_on_read, NULL, conn_on_event, c);
        bufferevent_enable(c->bev, EV_READ | EV_WRITE);
        if (c->deadline)
                evtimer_add(c->deadline, &tv);
        return c;
fail:
        SSL_free(ssl);
        close(fd);
fail_nofd:
        free(c);
        return NULL;
}

void peer_format_sockaddr(const struct sockaddr_in *sa, char *buf, size_t size)
{
        if (!inet_ntop(AF_INET, &sa->sin_addr, buf, (socklen_t)size))
                snprintf(buf, size, "?");
}

void peer_conn_on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *addr, int len,
                         void *userdata)
{
        struct peers *ps = userdata;
        struct sockaddr_in local = { 0 };
        socklen_t local_len = sizeof(local);
        char remote_s[64], local_s[64];
        struct peer_conn *c;
        json_object *mine;

        peer_format_sockaddr((struct sockaddr_in *)addr, remote_s, sizeof(remote_s));
        if (getsockname(fd, (struct sockaddr *)&local, &local_len) < 0) {
                close(fd);
                return;
        }
        peer_format_sockaddr(&local, local_s, sizeof(local_s));
        /* The peer channel lives on the fabric: a connection to another address of this host is
         * not for us. */
        mine = peer_local_ports(ps);
        if (!peer_port_for_address(mine, local_s, false, NULL)) {
                json_object_put(mine);
                peer_log_inbound_reject(ps, remote_s,
                                        "connected to an address that is not on a fabric port");
                close(fd);
                return;
        }
        json_object_put(mine);
        if (ps->n_pending >= MAX_PENDING_INBOUND) {
                peer_log_inbound_reject(ps, remote_s, "too many connections still in their handshake");
                close(fd);
                return;
        }
        c = peer_conn_new(ps, fd, false, NULL);
        if (!c)
                return;
        snprintf(c->remote, sizeof(c->remote), "%s", remote_s);
        snprintf(c->local, sizeof(c->local), "%s", local_s);
}

void peer_dial_address(struct peer *p, const char *address)
{
        struct peers *ps = p->owner;
        struct sockaddr_in remote = { .sin_family = AF_INET, .sin_port = htons(ps->port) };
        struct sockaddr_in local = { .sin_family = AF_INET };
        socklen_t local_len = sizeof(local);
        json_object *mine = peer_local_ports(ps), *port;
        const char *local_addr = NULL;
        struct peer_conn *c;
        int fd;

        if (inet_pton(AF_INET, address, &remote.sin_addr) != 1) {
                json_object_put(mine);
                return;
        }
        fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                json_object_put(mine);
                snprintf(p->last_error, sizeof(p->last_error), "socket: %s", strerror(errno));
                peer_schedule_retry(p);
                return;
        }
        /* Same subnet first: in a mesh each cable is its own subnet, so this picks the port. */
        port = peer_port_for_address(mine, address, true, &local_addr);
        if (port && local_addr && peer_ipv4_parse(local_addr, &local.sin_addr, NULL) &&
            bind(fd, (struct sockaddr *)&local, sizeof(local)) < 0)
                log_debug("peers: cannot bind to %s for %s: %m", local_addr, address);
        json_object_put(mine);

        c = peer_conn_new(ps, fd, true, p);
        if (!c) {
                peer_schedule_retry(p);
                return;
        }
        p->dialing = c;
        snprintf(c->remote, sizeof(c->remote), "%s", address);
        if (bufferevent_socket_connect(c->bev, (struct sockaddr *)&remote, sizeof(remote)) < 0) {
                snprintf(p->last_error, sizeof(p->last_error), "connect to %s: %s", address,
                         strerror(errno));
                peer_conn_close(c, NULL);
                return;
        }
        if (getsockname(bufferevent_getfd(c->bev), (struct sockaddr *)&local, &local_len) == 0)
                peer_format_sockaddr(&local, c->local, sizeof(c->local));
        /* Only a first dial shows as connecting: a peer that was up and is being redialled stays
         * down until it answers, so `down` is what a lost peer reads as. */
        if (p->state == PEER_DISCOVERED)
                peer_set_state(p, PEER_CONNECTING);
}

void peer_conn_send_heartbeat(struct peer_conn *c)
{
        peer_conn_send(c, message_new(c->owner, "heartbeat"));
}
