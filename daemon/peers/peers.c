#include "peers.h"

#include <arpa/inet.h>
#include <assert.h>
#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/dns.h>
#include <event2/listener.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cluster_key.h"
#include "common/strutil.h"
#include "daemon/base/log.h"
#include "daemon/base/node_id.h"
#include "discovery.h"
#include "peer_connect.h"
#include "peer_mdns.h"
#include "peer_session.h"
#include "peer_table.h"
#include "peer_tls.h"

/* A node whose sparkd is stopped or starved of CPU for a few seconds (a job pinning every core,
 * a debugger, SIGSTOP) still has a kernel that acknowledges what is sent to it: it is slow, not
 * gone, and a redial would only add a TLS handshake to the load that made it slow. It is closed
 * once silent for this many timeouts, or at the timeout when its host stops acknowledging. */
#define PEER_SLOW_LIMIT_TIMEOUTS 10

static void peer_set_slow(struct peer *p, bool is_slow, uint64_t silent_usec)
{
        if (p->is_slow == is_slow)
                return;
        p->is_slow = is_slow;
        if (is_slow)
                log_notice("peer %s is slow: nothing from it for %.1f s, though its host acknowledges "
                           "what is sent there",
                           p->name[0] ? p->name : p->node_id, (double)silent_usec / 1e6);
        else
                log_info("peer %s answers again", p->name[0] ? p->name : p->node_id);
}

/* Closes c when its peer is gone; false then. A silent peer whose host still acknowledges is
 * marked slow until PEER_SLOW_LIMIT_TIMEOUTS timeouts. */
static bool conn_check_silence(struct peers *ps, struct peer_conn *c, uint64_t now)
{
        uint64_t silent = now - c->last_rx_usec;
        struct peer *p = c->peer && c->peer->conn == c ? c->peer : NULL;
        bool acks;
        char why[128];

        if (p) {
                p->silent_usec = silent;
                if (silent <= 2 * ps->heartbeat_usec)
                        peer_set_slow(p, false, silent);
        }
        if (silent <= ps->timeout_usec) {
                if (p && silent > 2 * ps->heartbeat_usec && peer_conn_host_acks(c, 2 * ps->heartbeat_usec))
                        peer_set_slow(p, true, silent);
                return true;
        }
        acks = peer_conn_host_acks(c, 2 * ps->heartbeat_usec);
        if (acks && p && silent <= PEER_SLOW_LIMIT_TIMEOUTS * ps->timeout_usec) {
                peer_set_slow(p, true, silent);
                return true;
        }
        if (acks)
                snprintf(why, sizeof(why), "no heartbeat for %llu s, though its host acknowledged",
                         (unsigned long long)(silent / 1000000));
        else
                snprintf(why, sizeof(why), "no heartbeat for %llu s",
                         (unsigned long long)(ps->timeout_usec / 1000000));
        if (p)
                p->is_slow = false;
        /* The caller's next connection may be freed by a duplicate cleanup only through
         * peer_session_close(c). */
        peer_session_close(c, why);
        return false;
}

/* Every peer not connected, not being dialled and not waiting for its backoff, as far as the
 * places among MAX_DIALING go. */
static void peers_dial_waiting(struct peers *ps)
{
        struct peer *p;

        LIST_FOREACH(p, &ps->peers, link) {
                if (ps->n_dialing >= MAX_DIALING)
                        break;
                if (!p->conn && !p->dialing && !peer_is_retry_pending(p) && !peer_is_learned(p))
                        peer_dial(p);
        }
}

static void on_dial_waiting(evutil_socket_t fd, short what, void *userdata)
{
        peers_dial_waiting(userdata);
}

static void on_tick(evutil_socket_t fd, short what, void *userdata)
{
        struct peers *ps = userdata;
        struct peer_conn *c, *next;
        uint64_t now = peer_now_usec();
        unsigned forgotten;

        for (c = LIST_FIRST(&ps->conns); c; c = next) {
                next = LIST_NEXT(c, link);
                if (!c->is_hello_done)
                        continue;
                if (!conn_check_silence(ps, c, now))
                        continue;
                peer_session_send_heartbeat(c);
        }
        if (ps->tick_hook)
                ps->tick_hook(ps->tick_hook_userdata);
        forgotten = peer_session_forget(ps, time(NULL));
        if (forgotten)
                log_info("forgot %u peer%s known only from a hello, down for %llu s ([peers] "
                         "forget_after)",
                         forgotten, forgotten == 1 ? "" : "s", (unsigned long long)ps->forget_after_sec);
        peers_dial_waiting(ps);
        /* Nobody to beat for or dial: no wakeups until a peer or a connection comes (peers_wake).
         * mDNS needs no tick: the record changes with the fabric addresses (peers_fabric_changed)
         * and Avahi takes it again when it comes back. */
        if (LIST_EMPTY(&ps->conns) && LIST_EMPTY(&ps->peers))
                event_del(ps->tick);
}

static void peers_wake(struct peers *ps)
{
        struct timeval tick = { .tv_sec = (time_t)(ps->heartbeat_usec / 1000000),
                                .tv_usec = (suseconds_t)(ps->heartbeat_usec % 1000000) };

        if (ps->heartbeat_usec && !evtimer_pending(ps->tick, NULL)) /* 0: not configured yet */
                event_add(ps->tick, &tick);
}

int peers_new(struct event_base *base, struct links *links, const char *node_id, const char *state_dir,
              struct peers **ret)
{
        struct peers *ps = calloc(1, sizeof(*ps));
        int r;

        if (!ps)
                return -ENOMEM;
        ps->base = base;
        ps->links = links;
        ps->redial = peer_dial;
        ps->wake = peers_wake;
        snprintf(ps->node_id, sizeof(ps->node_id), "%s", node_id);
        snprintf(ps->node_id_file, sizeof(ps->node_id_file), "%s/%s", state_dir, NODE_KEY_FILE);
        r = node_id_random(ps->instance);
        if (r < 0) {
                free(ps);
                return r;
        }
        LIST_INIT(&ps->peers);
        LIST_INIT(&ps->conns);
        ps->tick = event_new(base, -1, EV_PERSIST, on_tick, ps);
        ps->dial_waiting = event_new(base, -1, 0, on_dial_waiting, ps);
        /* Reads resolv.conf and /etc/hosts once; used only for static peers given by name. */
        ps->dns = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS | EVDNS_BASE_DISABLE_WHEN_INACTIVE);
        if (!ps->tick || !ps->dial_waiting) {
                peers_free(ps);
                return -ENOMEM;
        }
        *ret = ps;
        return 0;
}

void peers_set_node_key(struct peers *ps, EVP_PKEY *key)
{
        ps->node_key = key;
        if (!key || node_key_public_hex(key, ps->public_key) < 0)
                ps->public_key[0] = '\0';
}

void peers_free(struct peers *ps)
{
        if (!ps)
                return;
        while (!LIST_EMPTY(&ps->peers))
                peer_remove(LIST_FIRST(&ps->peers));
        while (!LIST_EMPTY(&ps->conns))
                peer_session_free(LIST_FIRST(&ps->conns));
        discovery_free(ps->discovery);
        if (ps->listener)
                evconnlistener_free(ps->listener);
        if (ps->tick)
                event_free(ps->tick);
        if (ps->dial_waiting)
                event_free(ps->dial_waiting);
        if (ps->dns)
                evdns_base_free(ps->dns, 0);
        peer_tls_context_free(ps->tls);
        free(ps);
}

static int peers_listen(struct peers *ps, uint16_t port)
{
        struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons(port) };

        if (ps->listener && ps->port == port)
                return 0;
        if (ps->listener) {
                evconnlistener_free(ps->listener);
                ps->listener = NULL;
        }
        ps->port = port;
        /* Bound to every address, but peer_on_accept keeps only connections to fabric addresses,
         * which come and go with the links. */
        ps->listener =
                evconnlistener_new_bind(ps->base, peer_on_accept, ps,
                                        LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_EXEC,
                                        128, (struct sockaddr *)&any, sizeof(any));
        return ps->listener ? 0 : -errno;
}

static void peers_sync_static(struct peers *ps, char *const *specs)
{
        struct peer *p, *next;

        for (p = LIST_FIRST(&ps->peers); p; p = next) {
                next = LIST_NEXT(p, link);
                if (p->static_spec && !strv_contains(specs, p->static_spec)) {
                        free(p->static_spec);
                        p->static_spec = NULL;
                        if (!p->is_discovered && !p->conn)
                                peer_remove(p);
                }
        }
        for (char *const *s = specs; s && *s; s++) {
                struct in_addr ignored;
                bool known = false;

                LIST_FOREACH(p, &ps->peers, link)
                        if ((p->static_spec && strcmp(p->static_spec, *s) == 0) ||
                            strv_contains(p->addresses, *s))
                                known = true;
                if (known)
                        continue;
                p = peer_new(ps);
                if (!p)
                        return;
                p->static_spec = strdup(*s);
                if (inet_pton(AF_INET, *s, &ignored) == 1)
                        (void)strv_push(&p->addresses, *s);
        }
}

/* The sessions were keyed by the old key: a node the new one excludes must not stay in. */
static void peers_rekey(struct peers *ps, const char *old_id, const char *new_id)
{
        char why[160];
        unsigned n;

        if (new_id)
                snprintf(why, sizeof(why), "the cluster key changed here (id %s, was %s): handshaking again",
                         new_id, old_id);
        else
                snprintf(why, sizeof(why), "peering is off here: the cluster key (id %s) cannot be read",
                         old_id);
        n = peer_session_close_all(ps, why);
        if (new_id)
                log_notice(
                        "cluster key changed from id %s to id %s: closed %u peer connection%s, every peer "
                        "handshakes again with the new key",
                        old_id, new_id, n, n == 1 ? "" : "s");
        else if (n)
                log_notice("closed %u peer connection%s keyed by cluster key id %s", n, n == 1 ? "" : "s",
                           old_id);
}

/* Loads the cluster key; the TLS context changes only with the key. Errors with the key leave
 * peering off. */
static int peers_load_key(struct peers *ps, const struct sparkd_config *config)
{
        struct cluster_key key;
        char why[1024], old_id[sizeof(ps->key_id)];
        int r;

        snprintf(ps->key_file, sizeof(ps->key_file), "%s", config->key_file);
        snprintf(old_id, sizeof(old_id), "%s", ps->tls ? ps->key_id : "");
        r = cluster_key_load(config->key_file, &key, why, sizeof(why));
        if (r < 0) {
                snprintf(ps->off_reason, sizeof(ps->off_reason), "%s", why[0] ? why : strerror(-r));
                log_error("peering is off: %s", ps->off_reason);
                peer_tls_context_free(ps->tls);
                ps->tls = NULL;
                if (old_id[0])
                        peers_rekey(ps, old_id, NULL);
        } else if (!ps->tls || strcmp(ps->key_id, key.id) != 0) {
                SSL_CTX *ctx = peer_tls_context_new(&key);

                OPENSSL_cleanse(key.bytes, sizeof(key.bytes));
                /* The id changes with the context only: a reload after a failure here tries again. */
                if (!ctx)
                        return -ENOMEM;
                snprintf(ps->key_id, sizeof(ps->key_id), "%s", key.id);
                peer_tls_context_free(ps->tls);
                ps->tls = ctx;
                log_info("peering with cluster key %s (id %s) on TCP port %u", config->key_file, ps->key_id,
                         config->peer_port);
                if (old_id[0])
                        peers_rekey(ps, old_id, ps->key_id);
        }
        return 0;
}

int peers_configure(struct peers *ps, const struct sparkd_config *config)
{
        int r;

        snprintf(ps->name, sizeof(ps->name), "%s", config->node_name);
        ps->heartbeat_usec = config->heartbeat_usec;
        ps->timeout_usec = config->peer_timeout_usec;
        ps->max_learned = config->peer_max_learned;
        ps->forget_after_sec = (time_t)(config->peer_forget_after_usec / 1000000);

        r = peers_load_key(ps, config);
        if (r < 0)
                return r;
        if (ps->tls) {
                r = peers_listen(ps, config->peer_port);
                if (r < 0) {
                        snprintf(ps->off_reason, sizeof(ps->off_reason),
                                 "cannot listen on TCP port %u: %s; free the port (ss -ltnp 'sport = :%u' "
                                 "shows who holds it) or set [peers] port, then sparkc reload",
                                 config->peer_port, strerror(-r), config->peer_port);
                        log_error("peering is off: %s", ps->off_reason);
                } else {
                        ps->off_reason[0] = '\0';
                }
        }
        peers_sync_static(ps, config->static_peers);

        if (config->mdns && ps->tls && !ps->discovery) {
                r = discovery_new(ps->base, peer_mdns_found, peer_mdns_lost, ps, &ps->discovery);
                if (r < 0)
                        log_warning("mDNS discovery cannot start: %s; static peers only", strerror(-r));
                ps->published[0] = '\0';
        } else if ((!config->mdns || !ps->tls) && ps->discovery) {
                discovery_free(ps->discovery);
                ps->discovery = NULL;
        }
        peer_mdns_publish(ps);
        event_del(ps->tick);
        peers_wake(ps);
        on_tick(-1, 0, ps);
        return 0;
}

void peers_fabric_changed(struct peers *ps)
{
        peer_mdns_publish(ps);
}

int peers_add_message_handler(struct peers *ps, const char *prefix, peers_message_fn fn, void *userdata)
{
        struct peers_handler *free_slot = NULL;

        assert(prefix[0] && strlen(prefix) < sizeof(free_slot->prefix));
        for (size_t i = 0; i < ARRAY_SIZE(ps->handlers); i++) {
                if (strcmp(ps->handlers[i].prefix, prefix) == 0)
                        return -EEXIST;
                if (!ps->handlers[i].prefix[0] && !free_slot)
                        free_slot = &ps->handlers[i];
        }
        if (!free_slot)
                return -ENOSPC;
        snprintf(free_slot->prefix, sizeof(free_slot->prefix), "%s", prefix);
        free_slot->fn = fn;
        free_slot->userdata = userdata;
        return 0;
}

void peers_remove_message_handler(struct peers *ps, const char *prefix)
{
        for (size_t i = 0; i < ARRAY_SIZE(ps->handlers); i++)
                if (strcmp(ps->handlers[i].prefix, prefix) == 0)
                        ps->handlers[i] = (struct peers_handler){ 0 };
}

unsigned peers_broadcast(struct peers *ps, json_object *msg)
{
        struct peer *p;
        unsigned n = 0;

        LIST_FOREACH(p, &ps->peers, link)
                if (p->conn && p->conn->is_hello_done &&
                    peers_send(ps, p->node_id, json_object_get(msg)) == 0)
                        n++;
        return n;
}

int peers_hello_name(struct peers *ps, const char *node_id, char *buf, size_t size)
{
        const struct peer *p = peer_find_by_id(ps, node_id);

        if (!p || !p->name[0])
                return -ENOENT;
        snprintf(buf, size, "%s", p->name);
        return 0;
}

bool peers_is_slow(struct peers *ps, const char *node_id)
{
        const struct peer *p = peer_find_by_id(ps, node_id);

        return p && p->state == PEER_UP && p->is_slow;
}

uint64_t peers_budget(struct peers *ps)
{
        const struct peer *p;
        uint64_t n_up = 0;

        LIST_FOREACH(p, &ps->peers, link)
                n_up += p->state == PEER_UP;
        return PEERS_BUDGET_BASE + n_up * PEERS_BUDGET_PER_PEER;
}

bool peers_budget_defers(struct peers *ps)
{
        if (peer_sent_last_minute(ps) <= peers_budget(ps))
                return false;
        ps->sends_deferred++;
        return true;
}

int peers_send(struct peers *ps, const char *node_id, json_object *msg)
{
        struct peer *p = peer_find_by_id(ps, node_id);

        size_t queued;

        if (!p || !p->conn || !p->conn->is_hello_done) {
                json_object_put(msg);
                return -ENOTCONN;
        }
        /* A peer that does not read (or a link slower than what is sent) must not make this
         * daemon buffer without end: past the bound messages are dropped, said once a minute. */
        queued = evbuffer_get_length(bufferevent_get_output(p->conn->bev));
        if (queued > PEERS_SEND_QUEUE_MAX) {
                time_t now = time(NULL);

                p->n_send_dropped++;
                if (now - p->send_drop_logged >= 60) {
                        log_warning("peer %s: %zu bytes wait to be sent, over the limit of %d bytes; "
                                    "%llu messages to it dropped so far",
                                    peer_label(p), queued, PEERS_SEND_QUEUE_MAX,
                                    (unsigned long long)p->n_send_dropped);
                        p->send_drop_logged = now;
                }
                json_object_put(msg);
                return -ENOBUFS;
        }
        peer_count_sent(ps, peer_conn_send(p->conn, msg));
        return 0;
}

void peers_set_tick_hook(struct peers *ps, void (*fn)(void *userdata), void *userdata)
{
        ps->tick_hook = fn;
        ps->tick_hook_userdata = userdata;
}

void peers_set_chassis(struct peers *ps, const char *id, const char *name)
{
        snprintf(ps->chassis.id, sizeof(ps->chassis.id), "%s", id ? id : "");
        snprintf(ps->chassis.name, sizeof(ps->chassis.name), "%s", id && name ? name : "");
}
