#include "peer_session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/json_strict.h"
#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/strutil.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"
#include "peer_message.h"
#include "peer_ports.h"

static void session_on_dialled(struct peer_conn *c);
static void session_on_connected(struct peer_conn *c);
static int session_on_line(struct peer_conn *c, const char *line, size_t len);
static void session_on_broken(struct peer_conn *c, const char *why);
static void session_on_handshake_failed(struct peer_conn *c, const char *detail, bool is_refused);
static void session_on_deadline(struct peer_conn *c);

static const struct peer_conn_ops session_ops = {
        .on_dialled = session_on_dialled,
        .on_connected = session_on_connected,
        .on_line = session_on_line,
        .on_broken = session_on_broken,
        .on_handshake_failed = session_on_handshake_failed,
        .on_deadline = session_on_deadline,
};

void peer_session_attach(struct peers *ps, struct peer_conn *c, struct peer *p)
{
        c->owner = ps;
        c->peer = p;
        LIST_INSERT_HEAD(&ps->conns, c, link);
        if (ps->wake)
                ps->wake(ps);
        if (!c->is_outbound)
                ps->n_pending++;
        else
                ps->n_dialing++;
        peer_conn_set_deadline(c, HELLO_TIMEOUT_SEC);
}

/* c's handshake and hello are over, one way or the other: its place is free, and a dial that
 * waited for it is made now rather than at the next tick. */
static void peer_session_handshake_over(struct peer_conn *c)
{
        struct peers *ps = c->owner;

        if (!c->is_outbound) {
                ps->n_pending--;
                return;
        }
        if (ps->n_dialing-- == MAX_DIALING && ps->dial_waiting)
                event_active(ps->dial_waiting, EV_TIMEOUT, 1);
}

struct peer_conn *peer_session_new(struct peers *ps, int fd, bool outbound, struct peer *p)
{
        struct peer_conn *c = peer_conn_new(ps->base, ps->tls, fd, outbound, &session_ops);

        if (c) {
                /* A dial's handshake begins once its host answers (session_on_dialled). */
                if (!outbound)
                        ps->handshakes++;
                peer_session_attach(ps, c, p);
        }
        return c;
}

void peer_session_free(struct peer_conn *c)
{
        if (!c->is_hello_done)
                peer_session_handshake_over(c);
        LIST_REMOVE(c, link);
        peer_conn_free(c);
}

/* Probes running with the peer end now rather than at their deadline. */
static void session_notify_down(struct peers *ps, struct peer *p)
{
        if (p->node_id[0])
                peer_table_dispatch(ps, p->node_id, "peer-down", NULL);
}

void peer_session_close(struct peer_conn *c, const char *reason)
{
        struct peer *p = c->peer;
        bool is_refused = c->is_outbound && c->connect_error == ECONNREFUSED;

        if (p && p->dialing == c)
                p->dialing = NULL;
        if (p && p->conn == c) {
                p->conn = NULL;
                if (reason) {
                        struct log_field f[] = { { "peer", peer_label(p) },
                                                 { "peer_id", p->node_id },
                                                 { "address", p->via_remote },
                                                 { "iface", p->via_ifname } };

                        peer_set_error(p, "%s", reason);
                        event_emit(EVENT_PEER_DOWN, f, ARRAY_SIZE(f), "peer %s is down: %s", peer_label(p),
                                   reason);
                }
                peer_set_state(p, PEER_DOWN);
                if (c->is_hello_done)
                        session_notify_down(c->owner, p);
        }
        peer_session_free(c);
        if (p && !p->conn && !p->is_self && !peer_is_learned(p)) {
                if (is_refused)
                        peer_schedule_refused_retry(p);
                else
                        peer_schedule_retry(p);
        }
}

unsigned peer_session_close_all(struct peers *ps, const char *why)
{
        struct peer *p;
        unsigned n = 0;

        while (!LIST_EMPTY(&ps->conns)) {
                struct peer_conn *c = LIST_FIRST(&ps->conns);

                p = c->peer;
                if (p && p->dialing == c)
                        p->dialing = NULL;
                if (p && p->conn == c) {
                        p->conn = NULL;
                        n++;
                        peer_set_state(p, PEER_DOWN);
                        session_notify_down(ps, p);
                }
                peer_session_free(c);
        }
        LIST_FOREACH(p, &ps->peers, link) {
                if (p->is_self)
                        continue;
                peer_set_error(p, "%s", why);
                peer_reset_retry(p);
        }
        return n;
}

void peer_remove(struct peer *p)
{
        struct peer_conn *c, *next;

        for (c = LIST_FIRST(&p->owner->conns); c; c = next) {
                next = LIST_NEXT(c, link);
                if (c->peer == p && c->is_retiring)
                        peer_session_free(c);
        }
        if (p->conn)
                peer_session_free(p->conn);
        if (p->dialing)
                peer_session_free(p->dialing);
        peer_free(p);
}

void peer_session_send_heartbeat(struct peer_conn *c)
{
        peer_count_sent(c->owner, peer_conn_send(c, peer_message_heartbeat(c->owner)));
}

static void session_on_dialled(struct peer_conn *c)
{
        c->owner->handshakes++;
}

static void session_on_connected(struct peer_conn *c)
{
        unsigned char binding[PEER_CONN_BINDING_LEN];
        json_object *hello = NULL;

        if (peer_conn_binding(c, binding) == 0)
                hello = peer_message_hello(c->owner, binding, sizeof(binding), c->is_outbound);
        if (!hello) {
                log_error("cannot sign this node's hello to %s with its key; the connection is closed",
                          c->remote);
                peer_session_close(c, "this node cannot sign its hello");
                return;
        }
        peer_count_sent(c->owner, peer_conn_send(c, hello));
}

/* The peer may have sent on the old connection before its own hello on the new one told it of
 * the switch: the old one is read a while longer and then closed quietly. */
static void session_retire(struct peer_conn *old)
{
        old->is_retiring = true;
        peer_conn_set_deadline(old, RETIRE_GRACE_SEC);
}

/* Room for one more entry learned from a hello: past max_learned, the one down the longest goes.
 * Nodes that dial in with ids of their own cannot grow the table past it; -EUSERS when every
 * learned entry is up. */
static int session_make_room(struct peers *ps)
{
        struct peer *p, *oldest = NULL;
        unsigned n = 0;

        LIST_FOREACH(p, &ps->peers, link) {
                if (!peer_is_learned(p))
                        continue;
                n++;
                if (!p->conn && !p->dialing && p->state != PEER_UP && (!oldest || p->since < oldest->since))
                        oldest = p;
        }
        if (n < ps->max_learned)
                return 0;
        if (!oldest)
                return -EUSERS;
        peer_remove(oldest);
        return 0;
}

unsigned peer_session_forget(struct peers *ps, time_t now)
{
        struct peer *p, *next;
        unsigned n = 0;

        for (p = LIST_FIRST(&ps->peers); p; p = next) {
                next = LIST_NEXT(p, link);
                if (!peer_is_learned(p) || p->conn || p->dialing || p->state == PEER_UP ||
                    now - p->since < ps->forget_after_sec)
                        continue;
                peer_remove(p);
                n++;
        }
        return n;
}

/* The entry a hello names: the one dialled, one known by the id, or a new one. */
static struct peer *session_find_peer(struct peer_conn *c, const char *node_id)
{
        struct peers *ps = c->owner;
        struct peer *p = c->peer, *existing = peer_find_by_id(ps, node_id);

        if (p && existing && existing != p) {
                /* A static address that belongs to a peer already known by its id. */
                peer_merge(existing, p);
                if (p->dialing == c)
                        p->dialing = NULL;
                peer_remove(p);
                p = existing;
                if (!p->dialing)
                        p->dialing = c;
        } else if (!p) {
                p = existing ? existing : peer_find_unnamed_by_address(ps, c->remote);
                if (!p && session_make_room(ps) < 0)
                        return NULL;
                if (!p && (p = peer_new(ps)))
                        p->is_learned = true;
        }
        return p;
}

static void session_up(struct peer_conn *c, struct peer *p)
{
        struct log_field f[] = { { "peer", p->name },
                                 { "peer_id", p->node_id },
                                 { "address", c->remote },
                                 { "iface", p->via_ifname } };

        if (p->dialing == c)
                p->dialing = NULL;
        peer_session_handshake_over(c);
        c->is_hello_done = true;
        peer_conn_clear_deadline(c);
        p->conn = c;
        p->backoff_ms = BACKOFF_MIN_MS;
        p->refused_retry_ms = 0;
        peer_clear_error(p);
        snprintf(p->via_local, sizeof(p->via_local), "%s", c->local);
        snprintf(p->via_remote, sizeof(p->via_remote), "%s", c->remote);
        peer_check_mtu(p);
        if (p->state != PEER_UP) {
                peer_set_state(p, PEER_UP);
                event_emit(EVENT_PEER_UP, f, ARRAY_SIZE(f), "peer %s (%s) is up via %s%s%s", p->name,
                           c->remote, p->via_ifname[0] ? p->via_ifname : c->local,
                           p->version[0] ? ", sparkd " : "", p->version);
        }
        /* Per connection, as peer-down is: a reconnect within the grace still greets anew. */
        peer_table_dispatch(c->owner, p->node_id, "peer-up", NULL);
}

/* The hello of this very process (a static address of its own) or of another node that runs with
 * this node's id. A sparkd without instances in its hello is another node when it has another
 * name or speaks from an address that is not one of ours. */
static bool session_is_other_node(struct peer_conn *c, const struct peer_hello *hello)
{
        struct peers *ps = c->owner;
        struct link_ports mine = { 0 };
        bool ours;

        if (hello->instance)
                return strcmp(hello->instance, ps->instance) != 0;
        if (strcmp(hello->name, ps->name) != 0)
                return true;
        (void)peer_ports_local(ps->links, &mine);
        ours = peer_port_for_address(&mine, c->remote, false, NULL) != NULL;
        link_ports_clear(&mine);
        return !ours;
}

/* Both nodes see the other's hello, so both report it; the entry shows it until the clone gets
 * an id of its own and the redial finds a peer like any other. */
static int session_report_duplicate_id(struct peer_conn *c, const struct peer_hello *hello)
{
        struct peers *ps = c->owner;
        struct peer *p = c->peer;
        struct log_field f[] = { { "peer", hello->name },
                                 { "peer_id", hello->node_id },
                                 { "address", c->remote } };

        if (!p)
                p = peer_find_unnamed_by_address(ps, c->remote);
        if (!p)
                p = peer_find_by_id(ps, hello->node_id);
        if (!p)
                p = peer_new(ps);
        if (!p)
                return -ENOMEM;
        if (p->dialing == c)
                p->dialing = NULL;
        c->peer = p;
        snprintf(p->node_id, sizeof(p->node_id), "%s", hello->node_id);
        snprintf(p->name, sizeof(p->name), "%s", hello->name);
        if (!strv_contains(p->addresses, c->remote))
                (void)strv_push(&p->addresses, c->remote);
        peer_set_error(
                p,
                "node %s (%s) runs with this node's id %s: a cloned disk image, or two daemons on one state "
                "directory; delete %s on the cloned node and restart sparkd there",
                hello->name, c->remote, hello->node_id, ps->node_id_file);
        if (p->state != PEER_DUPLICATE_ID) {
                log_structured(LOG_ERR, NULL, f, ARRAY_SIZE(f), "peer %s",
                               p->last_error ? p->last_error : "runs with this node's id");
                peer_set_state(p, PEER_DUPLICATE_ID);
        }
        return -EADDRINUSE;
}

static int session_handle_hello(struct peer_conn *c, json_object *m)
{
        struct peers *ps = c->owner;
        unsigned char binding[PEER_CONN_BINDING_LEN];
        struct peer_hello hello;
        struct peer *p;
        int r;

        if (peer_message_read_hello(m, &hello) < 0)
                return -EBADMSG;
        r = peer_conn_binding(c, binding);
        if (r == 0)
                r = peer_message_prove_hello(&hello, binding, sizeof(binding), !c->is_outbound, c->refusal,
                                             sizeof(c->refusal));
        if (r < 0)
                return r == -EPROTO ? -EBADMSG : -EKEYREJECTED;
        if (strcmp(hello.node_id, ps->node_id) == 0 && session_is_other_node(c, &hello))
                return session_report_duplicate_id(c, &hello);
        if (strcmp(hello.node_id, ps->node_id) == 0) {
                if (c->peer && c->peer->static_spec) {
                        c->peer->is_self = true;
                        peer_set_error(c->peer, "this is the node itself");
                }
                return -ELOOP;
        }

        p = session_find_peer(c, hello.node_id);
        if (!p)
                return -EUSERS;
        c->peer = p;
        snprintf(p->node_id, sizeof(p->node_id), "%s", hello.node_id);
        snprintf(p->name, sizeof(p->name), "%s", hello.name);
        snprintf(p->version, sizeof(p->version), "%s", hello.version ? hello.version : "?");
        json_object_put(p->ports);
        p->ports = json_object_get(hello.ports);
        p->chassis = hello.chassis;
        if (!c->is_outbound && !strv_contains(p->addresses, c->remote))
                (void)strv_push(&p->addresses, c->remote);

        /* Both ends may have dialled: keep the connection the lower node id started, on both. */
        if (p->conn && p->conn != c) {
                const char *mine = c->is_outbound ? ps->node_id : hello.node_id;
                const char *theirs = p->conn->is_outbound ? ps->node_id : hello.node_id;

                if (strcmp(mine, theirs) >= 0) {
                        if (p->dialing == c)
                                p->dialing = NULL;
                        c->peer = NULL;
                        return -EALREADY;
                }
                session_retire(p->conn);
                p->conn = NULL;
        }
        session_up(c, p);
        return 0;
}

static int session_handle_heartbeat(struct peer_conn *c, json_object *m)
{
        struct peer_chassis chassis;
        json_object *ports;

        if (peer_message_read_ports(m, &ports) < 0 || peer_message_read_chassis(m, &chassis) < 0)
                return -EBADMSG;
        if (c->peer && !c->is_retiring)
                c->peer->chassis = chassis;
        /* A retiring connection's heartbeat may predate the hello that replaced it. */
        if (ports && c->peer && !c->is_retiring) {
                /* The same ports every heartbeat, mostly: kept as they are, rather than a piece of
                 * each message kept every 2 s for every peer between what the message frees. The
                 * MTUs are compared again all the same: this end's may have changed. */
                if (!c->peer->ports || !json_object_equal(c->peer->ports, ports)) {
                        json_object_put(c->peer->ports);
                        c->peer->ports = json_object_get(ports);
                }
                peer_check_mtu(c->peer);
        }
        return 0;
}

/* Nesting a peer message needs, with room; deeper is refused, not recursed into. */
#define PEER_MESSAGE_MAX_DEPTH 32

static int session_handle_line(struct peer_conn *c, const char *line, size_t len)
{
        enum json_strict_error error;
        json_object *m = NULL;
        const char *type = NULL;
        char why[128];
        int r = 0;

        /* Read strictly: a message naming "type" twice must not mean what its last one says. */
        if (json_strict_parse(line, len, PEER_MESSAGE_MAX_DEPTH, &m, &error, why, sizeof(why)) < 0) {
                if (c->peer && error != JSON_STRICT_SYNTAX)
                        log_warning("peer %s (%s) sent a message that is refused: %s", c->peer->name,
                                    c->remote, why);
                return -EBADMSG;
        }
        if (!json_object_is_type(m, json_type_object) || jsonrpc_param_string(m, "type", &type) <= 0) {
                json_object_put(m);
                return -EBADMSG;
        }
        if (strcmp(type, "hello") == 0)
                r = c->is_hello_done ? -EPROTO : session_handle_hello(c, m);
        else if (!c->is_hello_done)
                r = -EPROTO;
        else if (strcmp(type, "heartbeat") == 0)
                r = session_handle_heartbeat(c, m);
        else if (c->peer)
                peer_table_dispatch(c->owner, c->peer->node_id, type, m);
        json_object_put(m);
        return r;
}

int peer_session_receive(struct peer_conn *c, const char *line, size_t len)
{
        int r = session_handle_line(c, line, len);

        if (r == -EALREADY || r == -ELOOP || r == -EADDRINUSE) {
                peer_session_close(c, NULL);
                return r;
        }
        if (r == -EUSERS) {
                char why[160];

                snprintf(why, sizeof(why),
                         "a hello from a node not known here, and the %u peers known only from their "
                         "hellos ([peers] max_learned) are all up",
                         c->owner->max_learned);
                peer_log_inbound_reject(c->owner, c->remote, why);
                peer_session_close(c, NULL);
                return r;
        }
        if (r == -EKEYREJECTED) {
                /* Said once per connection and peer, the inbound ones counted as other refusals. */
                if (c->peer)
                        log_warning("peer %s (%s) is refused: %s", peer_label(c->peer), c->remote,
                                    c->refusal);
                else
                        peer_log_inbound_reject(c->owner, c->remote, c->refusal);
                peer_session_close(c, c->peer ? c->refusal : NULL);
                return r;
        }
        if (r < 0) {
                if (!c->peer)
                        peer_log_inbound_reject(c->owner, c->remote, "not the sparkd peer protocol");
                peer_session_close(c, "protocol error");
                return r;
        }
        return 0;
}

static int session_on_line(struct peer_conn *c, const char *line, size_t len)
{
        return peer_session_receive(c, line, len);
}

static void session_on_broken(struct peer_conn *c, const char *why)
{
        peer_session_close(c, why);
}

/* TLS refusing the handshake says only that the two ends share no key: say what that means for
 * a cluster and how to fix it, OpenSSL's words kept as a detail at the end. */
static void describe_key_mismatch(const struct peers *ps, const char *detail, char *buf, size_t size)
{
        snprintf(buf, size,
                 "the peer has another cluster key, or is not sparkd: every node needs the same key file; "
                 "copy %s (key id %s here) to the other node, same path and mode 600, and run `sparkc "
                 "reload` there (%s)",
                 ps->key_file, ps->key_id, detail);
}

static void session_on_handshake_failed(struct peer_conn *c, const char *detail, bool is_refused)
{
        struct peer *p = c->peer;
        char why[1024];

        if (is_refused)
                describe_key_mismatch(c->owner, detail, why, sizeof(why));
        else
                snprintf(why, sizeof(why), "%s", detail);
        if (!c->is_outbound) {
                peer_log_inbound_reject(c->owner, c->remote, why);
                peer_session_close(c, NULL);
                return;
        }
        if (p && is_refused) {
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
                peer_set_error(p, "%s", why);
        peer_session_close(c, NULL);
}

static void session_on_deadline(struct peer_conn *c)
{
        if (c->is_retiring) {
                peer_session_close(c, NULL);
                return;
        }
        if (!c->is_outbound)
                peer_log_inbound_reject(c->owner, c->remote, "no TLS handshake and hello within 5 s");
        else if (c->peer) {
                peer_set_error(c->peer, "no hello within %d s", HELLO_TIMEOUT_SEC);
                if (c->peer->state == PEER_CONNECTING)
                        peer_set_state(c->peer, PEER_DOWN);
        }
        peer_session_close(c, NULL);
}
