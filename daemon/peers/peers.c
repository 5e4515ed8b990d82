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
#include "daemon/base/event.h"
#include "daemon/base/log.h"
#include "discovery.h"
#include "peer_internal.h"
#include "peer_tls.h"

static const char *const state_names[] = {
        [PEER_DISCOVERED] = "discovered",
        [PEER_CONNECTING] = "connecting",
        [PEER_UP] = "up",
        [PEER_DOWN] = "down",
        [PEER_REJECTED] = "rejected",
};

uint64_t peer_now_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000ULL;
}

const char *peer_label(const struct peer *p)
{
        if (p->name[0])
                return p->name;
        if (p->static_spec)
                return p->static_spec;
        return p->addresses && p->addresses[0] ? p->addresses[0] : "?";
}

void peer_set_state(struct peer *p, enum peer_state state)
{
        if (p->state == state)
                return;
        p->state = state;
        p->since = time(NULL);
}

/* ---- local ports ---- */

/* This node's fabric ports as the peer protocol describes them: [{ifname, addresses, mtu}]. */
json_object *peer_local_ports(struct peers *ps)
{
        json_object *links, *out = json_object_new_array();

        /* A table without fabric links (a tool or test driving peer messages) has no ports. */
        if (!ps->links)
                return out;
        links = links_to_json(ps->links);

        for (size_t i = 0; i < json_object_array_length(links); i++) {
                json_object *l = json_object_array_get_idx(links, i), *name, *addrs, *mtu, *down, *port;

                if (json_object_object_get_ex(l, "keep_down", &down) && json_object_get_boolean(down))
                        continue;
                json_object_object_get_ex(l, "name", &name);
                json_object_object_get_ex(l, "addresses", &addrs);
                json_object_object_get_ex(l, "mtu", &mtu);
                port = json_object_new_object();
                json_object_object_add(port, "ifname", json_object_get(name));
                json_object_object_add(port, "addresses", json_object_get(addrs));
                json_object_object_add(port, "mtu", json_object_get(mtu));
                json_object_array_add(out, port);
        }
        json_object_put(links);
        return out;
}

bool peer_ipv4_parse(const char *s, struct in_addr *addr, unsigned *prefix)
{
        char buf[64];
        const char *slash = strchr(s, '/');
        size_t n = slash ? (size_t)(slash - s) : strlen(s);

        if (n >= sizeof(buf))
                return false;
        memcpy(buf, s, n);
        buf[n] = '\0';
        if (prefix)
                *prefix = slash ? (unsigned)atoi(slash + 1) : 32;
        return inet_pton(AF_INET, buf, addr) == 1;
}

/* Finds the port whose addresses include ip (or share its subnet, when by_subnet). */
json_object *peer_port_for_address(json_object *ports, const char *ip, bool by_subnet, const char **address)
{
        struct in_addr target;

        /* ports comes from the peer: anything but an array of objects with an array of addresses
         * names no port. */
        if (!json_object_is_type(ports, json_type_array) || !peer_ipv4_parse(ip, &target, NULL))
                return NULL;
        for (size_t i = 0; i < json_object_array_length(ports); i++) {
                json_object *port = json_object_array_get_idx(ports, i), *addrs;

                if (!json_object_object_get_ex(port, "addresses", &addrs) ||
                    !json_object_is_type(addrs, json_type_array))
                        continue;
                for (size_t k = 0; k < json_object_array_length(addrs); k++) {
                        const char *a = json_object_get_string(json_object_array_get_idx(addrs, k));
                        struct in_addr local;
                        unsigned prefix;
                        uint32_t mask;

                        if (!a || !peer_ipv4_parse(a, &local, &prefix) || prefix > 32)
                                continue;
                        mask = by_subnet ? (prefix ? htonl(~0U << (32 - prefix)) : 0) : 0xffffffffU;
                        if ((local.s_addr & mask) != (target.s_addr & mask))
                                continue;
                        if (address)
                                *address = a;
                        return port;
                }
        }
        return NULL;
}

const char *peer_port_string(json_object *port, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(port, key, &v) ? json_object_get_string(v) : NULL;
}

unsigned peer_port_mtu(json_object *port)
{
        json_object *v;

        return json_object_object_get_ex(port, "mtu", &v) ? (unsigned)json_object_get_int(v) : 0;
}

/* ---- messages ---- */

/* Compares the MTU of the local port that reaches the peer with the peer's port at the other
 * end of that cable (the one holding the address we talk to). */
void peer_check_mtu(struct peer *p)
{
        struct peers *ps = p->owner;
        json_object *mine = peer_local_ports(ps), *local_port, *remote_port;
        char local_s[16], peer_s[16];

        local_port = peer_port_for_address(mine, p->via_local, false, NULL);
        remote_port = peer_port_for_address(p->ports, p->via_remote, false, NULL);
        p->local_mtu = local_port ? peer_port_mtu(local_port) : 0;
        p->peer_mtu = remote_port ? peer_port_mtu(remote_port) : 0;
        if (local_port && peer_port_string(local_port, "ifname"))
                snprintf(p->via_ifname, sizeof(p->via_ifname), "%s", peer_port_string(local_port, "ifname"));
        json_object_put(mine);
        if (!p->local_mtu || !p->peer_mtu)
                return;
        if (p->local_mtu == p->peer_mtu) {
                if (p->is_mtu_mismatch)
                        log_notice("MTU towards %s agrees again: %u at both ends", peer_label(p),
                                   p->local_mtu);
                p->is_mtu_mismatch = false;
                return;
        }
        if (p->is_mtu_mismatch)
                return;
        p->is_mtu_mismatch = true;
        snprintf(local_s, sizeof(local_s), "%u", p->local_mtu);
        snprintf(peer_s, sizeof(peer_s), "%u", p->peer_mtu);
        {
                struct log_field f[] = {
                        { "peer", peer_label(p) },  { "peer_id", p->node_id },
                        { "iface", p->via_ifname }, { "mtu", local_s },
                        { "peer_mtu", peer_s },     { "peer_iface", peer_port_string(remote_port, "ifname") }
                };

                event_emit(EVENT_PEER_MTU_MISMATCH, f, ARRAY_SIZE(f),
                           "MTU mismatch on the cable to %s: %s has MTU %u here, %s has %u there; traffic "
                           "larger than "
                           "the smaller MTU is dropped",
                           peer_label(p), p->via_ifname, p->local_mtu,
                           peer_port_string(remote_port, "ifname") ? peer_port_string(remote_port, "ifname")
                                                                   : "its port",
                           p->peer_mtu);
        }
}

/* ---- connections ---- */

/* Ends a connection; reason NULL means quietly (a duplicate being dropped). */

void peer_log_inbound_reject(struct peers *ps, const char *remote, const char *why)
{
        time_t now = time(NULL);

        /* Junk on the port must not become junk in the journal: one line per interval, counted. */
        if (now - ps->last_reject_log < REJECT_LOG_INTERVAL) {
                ps->rejects_unlogged++;
                return;
        }
        {
                struct log_field f[] = { { "peer", remote }, { "address", remote } };
                char more[64] = "";

                if (ps->rejects_unlogged)
                        snprintf(more, sizeof(more), " (and %u more since the last report)",
                                 ps->rejects_unlogged);
                event_emit(EVENT_PEER_REJECTED, f, ARRAY_SIZE(f), "rejected a connection from %s: %s%s",
                           remote, why, more);
        }
        ps->last_reject_log = now;
        ps->rejects_unlogged = 0;
}

struct peer *peer_find_by_id(struct peers *ps, const char *node_id)
{
        struct peer *p;

        LIST_FOREACH(p, &ps->peers, link)
                if (p->node_id[0] && strcmp(p->node_id, node_id) == 0)
                        return p;
        return NULL;
}

static void on_retry(evutil_socket_t fd, short what, void *userdata);

struct peer *peer_new(struct peers *ps)
{
        struct peer *p = calloc(1, sizeof(*p));

        if (!p)
                return NULL;
        p->owner = ps;
        p->addresses = calloc(1, sizeof(char *));
        p->retry = evtimer_new(ps->base, on_retry, p);
        if (!p->addresses || !p->retry) {
                free(p->addresses);
                if (p->retry)
                        event_free(p->retry);
                free(p);
                return NULL;
        }
        p->state = PEER_DISCOVERED;
        p->since = time(NULL);
        p->backoff_ms = BACKOFF_MIN_MS;
        LIST_INSERT_HEAD(&ps->peers, p, link);
        return p;
}

void peer_free(struct peer *p)
{
        struct peer_conn *c, *next;

        for (c = LIST_FIRST(&p->owner->conns); c; c = next) {
                next = LIST_NEXT(c, link);
                if (c->peer == p && c->is_retiring)
                        peer_conn_free(c);
        }
        if (p->conn)
                peer_conn_free(p->conn);
        if (p->dialing)
                peer_conn_free(p->dialing);
        event_free(p->retry);
        strv_free(p->addresses);
        free(p->static_spec);
        json_object_put(p->ports);
        LIST_REMOVE(p, link);
        free(p);
}

/* Folds `from` (a static entry that turned out to be `into`) into `into`. */
void peer_merge(struct peer *into, struct peer *from)
{
        for (char **a = from->addresses; a && *a; a++)
                if (!strv_contains(into->addresses, *a))
                        (void)strv_push(&into->addresses, *a);
        if (from->static_spec && !into->static_spec)
                into->static_spec = TAKE_PTR(from->static_spec);
}

static void on_resolved(int result, struct evutil_addrinfo *res, void *userdata)
{
        struct peer *p = userdata;
        char address[64];

        if (result != 0 || !res) {
                snprintf(p->last_error, sizeof(p->last_error), "cannot resolve %s: %s", p->static_spec,
                         evutil_gai_strerror(result));
                peer_schedule_retry(p);
                return;
        }
        peer_format_sockaddr((struct sockaddr_in *)res->ai_addr, address, sizeof(address));
        evutil_freeaddrinfo(res);
        if (!strv_contains(p->addresses, address))
                (void)strv_push(&p->addresses, address);
        peer_dial_address(p, address);
}

static void peer_dial(struct peer *p)
{
        struct peers *ps = p->owner;
        size_t n = strv_length(p->addresses);
        struct in_addr ignored;

        if (!ps->tls || !ps->listener || p->conn || p->dialing || p->is_self)
                return;
        if (n == 0 && p->static_spec && inet_pton(AF_INET, p->static_spec, &ignored) != 1 && ps->dns) {
                struct evutil_addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };

                /* Names resolve without blocking the loop; the answer dials. */
                evdns_getaddrinfo(ps->dns, p->static_spec, NULL, &hints, on_resolved, p);
                return;
        }
        if (n == 0)
                return;
        peer_dial_address(p, p->addresses[p->next_address++ % n]);
}

static void on_retry(evutil_socket_t fd, short what, void *userdata)
{
        peer_dial(userdata);
}

void peer_schedule_retry(struct peer *p)
{
        unsigned jitter = p->backoff_ms / 4 ? (unsigned)random() % (p->backoff_ms / 4) : 0;
        unsigned delay = p->backoff_ms + jitter;
        struct timeval tv = { .tv_sec = delay / 1000, .tv_usec = (suseconds_t)(delay % 1000) * 1000 };

        /* Exponential backoff with jitter, so nodes that lost each other do not retry in step. */
        evtimer_add(p->retry, &tv);
        p->backoff_ms = p->backoff_ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : p->backoff_ms * 2;
}

/* ---- discovery ---- */

/* mDNS records are not authenticated: anyone on the link can announce them. Bounds keep a flood of
 * made-up nodes or addresses from growing the table without end; a record beyond them is dropped
 * (the key still decides who gets in, so a real node past the bound is a static peer away). */
#define DISCOVERED_PEERS_MAX 256
#define PEER_ADDRESSES_MAX   16

static unsigned count_discovered(struct peers *ps)
{
        struct peer *p;
        unsigned n = 0;

        LIST_FOREACH(p, &ps->peers, link)
                n += p->is_discovered && !p->static_spec;
        return n;
}

static void on_found(const struct discovery_record *r, void *userdata)
{
        struct peers *ps = userdata;
        struct peer *p = peer_find_by_id(ps, r->node_id);

        if (!p) {
                if (count_discovered(ps) >= DISCOVERED_PEERS_MAX) {
                        log_debug("mDNS: %s (%s) ignored: %d discovered peers already", r->name, r->node_id,
                                  DISCOVERED_PEERS_MAX);
                        return;
                }
                p = peer_new(ps);
                if (!p)
                        return;
                snprintf(p->node_id, sizeof(p->node_id), "%s", r->node_id);
        }
        if (!p->name[0] || p->state != PEER_UP)
                snprintf(p->name, sizeof(p->name), "%s", r->name);
        p->is_discovered = true;
        for (char **a = r->addresses; a && *a && strv_length(p->addresses) < PEER_ADDRESSES_MAX; a++)
                if (!strv_contains(p->addresses, *a))
                        (void)strv_push(&p->addresses, *a);
        if (!p->conn && !p->dialing && !evtimer_pending(p->retry, NULL))
                peer_dial(p);
}

static void on_lost(const char *node_id, void *userdata)
{
        struct peer *p = peer_find_by_id(userdata, node_id);

        /* A live connection outranks mDNS: the heartbeat says when the peer is really gone. */
        if (p && !p->conn && !p->static_spec && p->state != PEER_UP) {
                log_info("peer %s left mDNS", peer_label(p));
                peer_free(p);
        } else if (p) {
                p->is_discovered = false;
        }
}

static void peers_publish(struct peers *ps)
{
        struct discovery_record self = { .proto = DISCOVERY_PROTO, .port = ps->port };
        json_object *mine;
        char joined[512] = "";

        if (!ps->discovery)
                return;
        mine = peer_local_ports(ps);
        self.addresses = calloc(1, sizeof(char *));
        for (size_t i = 0; self.addresses && i < json_object_array_length(mine); i++) {
                json_object *addrs = NULL;

                json_object_object_get_ex(json_object_array_get_idx(mine, i), "addresses", &addrs);
                for (size_t k = 0; addrs && k < json_object_array_length(addrs); k++) {
                        const char *a = json_object_get_string(json_object_array_get_idx(addrs, k));
                        char ip[64];
                        size_t n = strcspn(a, "/");

                        if (strchr(a, ':') || n >= sizeof(ip))
                                continue;
                        memcpy(ip, a, n);
                        ip[n] = '\0';
                        (void)strv_push(&self.addresses, ip);
                        snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s,", ip);
                }
        }
        json_object_put(mine);
        snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s:%u", ps->name, ps->port);
        if (strcmp(joined, ps->published) != 0) {
                snprintf(self.node_id, sizeof(self.node_id), "%s", ps->node_id);
                snprintf(self.name, sizeof(self.name), "%s", ps->name);
                if (discovery_publish(ps->discovery, &self) == 0)
                        snprintf(ps->published, sizeof(ps->published), "%s", joined);
        }
        strv_free(self.addresses);
}

/* ---- heartbeat ---- */

static void on_tick(evutil_socket_t fd, short what, void *userdata)
{
        struct peers *ps = userdata;
        struct peer_conn *c, *next;
        struct peer *p;
        uint64_t now = peer_now_usec();

        for (c = LIST_FIRST(&ps->conns); c; c = next) {
                next = LIST_NEXT(c, link);
                if (!c->is_hello_done)
                        continue;
                if (now - c->last_rx_usec > ps->timeout_usec) {
                        char why[96];

                        snprintf(why, sizeof(why), "no heartbeat for %llu s",
                                 (unsigned long long)(ps->timeout_usec / 1000000));
                        /* next may be freed by a duplicate cleanup only through peer_conn_close(c). */
                        peer_conn_close(c, why);
                        continue;
                }
                peer_conn_send_heartbeat(c);
        }
        LIST_FOREACH(p, &ps->peers, link)
                if (!p->conn && !p->dialing && !evtimer_pending(p->retry, NULL))
                        peer_dial(p);
        peers_publish(ps);
}

/* ---- set-up ---- */

int peers_new(struct event_base *base, struct links *links, const char *node_id, struct peers **ret)
{
        struct peers *ps = calloc(1, sizeof(*ps));

        if (!ps)
                return -ENOMEM;
        ps->base = base;
        ps->links = links;
        snprintf(ps->node_id, sizeof(ps->node_id), "%s", node_id);
        LIST_INIT(&ps->peers);
        LIST_INIT(&ps->conns);
        ps->tick = event_new(base, -1, EV_PERSIST, on_tick, ps);
        /* Reads resolv.conf and /etc/hosts once; used only for static peers given by name. */
        ps->dns = evdns_base_new(base, EVDNS_BASE_INITIALIZE_NAMESERVERS | EVDNS_BASE_DISABLE_WHEN_INACTIVE);
        if (!ps->tick) {
                peers_free(ps);
                return -ENOMEM;
        }
        *ret = ps;
        return 0;
}

void peers_free(struct peers *ps)
{
        if (!ps)
                return;
        while (!LIST_EMPTY(&ps->peers))
                peer_free(LIST_FIRST(&ps->peers));
        while (!LIST_EMPTY(&ps->conns))
                peer_conn_free(LIST_FIRST(&ps->conns));
        discovery_free(ps->discovery);
        if (ps->listener)
                evconnlistener_free(ps->listener);
        if (ps->tick)
                event_free(ps->tick);
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
        /* Bound to every address, but peer_conn_on_accept keeps only connections to fabric addresses,
         * which come and go with the links. */
        ps->listener =
                evconnlistener_new_bind(ps->base, peer_conn_on_accept, ps,
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
                                peer_free(p);
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

int peers_configure(struct peers *ps, const struct sparkd_config *config)
{
        struct cluster_key key;
        char why[256];
        struct timeval tick = { .tv_sec = (time_t)(config->heartbeat_usec / 1000000),
                                .tv_usec = (suseconds_t)(config->heartbeat_usec % 1000000) };
        int r;

        snprintf(ps->name, sizeof(ps->name), "%s", config->node_name);
        ps->heartbeat_usec = config->heartbeat_usec;
        ps->timeout_usec = config->peer_timeout_usec;

        r = cluster_key_load(config->key_file, &key, why, sizeof(why));
        if (r < 0) {
                log_error("peering is off: %s", why[0] ? why : strerror(-r));
                peer_tls_context_free(ps->tls);
                ps->tls = NULL;
        } else if (!ps->tls || strcmp(ps->key_id, key.id) != 0) {
                SSL_CTX *ctx = peer_tls_context_new(&key);

                snprintf(ps->key_id, sizeof(ps->key_id), "%s", key.id);
                OPENSSL_cleanse(&key, sizeof(key));
                if (!ctx)
                        return -ENOMEM;
                peer_tls_context_free(ps->tls);
                ps->tls = ctx;
                log_info("peering with cluster key %s (id %s) on TCP port %u", config->key_file, ps->key_id,
                         config->peer_port);
        }
        if (ps->tls) {
                r = peers_listen(ps, config->peer_port);
                if (r < 0)
                        log_error("peering is off: cannot listen on TCP port %u: %s", config->peer_port,
                                  strerror(-r));
        }
        peers_sync_static(ps, config->static_peers);

        if (config->mdns && ps->tls && !ps->discovery) {
                r = discovery_new(ps->base, on_found, on_lost, ps, &ps->discovery);
                if (r < 0)
                        log_warning("mDNS discovery cannot start: %s; static peers only", strerror(-r));
                ps->published[0] = '\0';
        } else if ((!config->mdns || !ps->tls) && ps->discovery) {
                discovery_free(ps->discovery);
                ps->discovery = NULL;
        }
        peers_publish(ps);
        event_del(ps->tick);
        event_add(ps->tick, &tick);
        on_tick(-1, 0, ps);
        return 0;
}

static json_object *peer_to_json(const struct peer *p)
{
        json_object *o = json_object_new_object(), *addrs = json_object_new_array(), *via = NULL, *mtu;
        char since[32];
        struct tm tm;

        for (char **a = p->addresses; a && *a; a++)
                json_object_array_add(addrs, json_object_new_string(*a));
        gmtime_r(&p->since, &tm);
        strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object_object_add(o, "name", p->name[0] ? json_object_new_string(p->name) : NULL);
        json_object_object_add(o, "node_id", p->node_id[0] ? json_object_new_string(p->node_id) : NULL);
        json_object_object_add(o, "state",
                               json_object_new_string(p->is_self ? "self" : state_names[p->state]));
        json_object_object_add(o, "since", json_object_new_string(since));
        json_object_object_add(o, "static", p->static_spec ? json_object_new_string(p->static_spec) : NULL);
        json_object_object_add(o, "discovered", json_object_new_boolean(p->is_discovered));
        json_object_object_add(o, "addresses", addrs);
        if (p->via_remote[0]) {
                via = json_object_new_object();
                json_object_object_add(via, "iface",
                                       p->via_ifname[0] ? json_object_new_string(p->via_ifname) : NULL);
                json_object_object_add(via, "local", json_object_new_string(p->via_local));
                json_object_object_add(via, "remote", json_object_new_string(p->via_remote));
        }
        json_object_object_add(o, "via", via);
        json_object_object_add(o, "version", p->version[0] ? json_object_new_string(p->version) : NULL);
        mtu = json_object_new_object();
        json_object_object_add(mtu, "local", p->local_mtu ? json_object_new_int((int)p->local_mtu) : NULL);
        json_object_object_add(mtu, "peer", p->peer_mtu ? json_object_new_int((int)p->peer_mtu) : NULL);
        json_object_object_add(mtu, "mismatch", json_object_new_boolean(p->is_mtu_mismatch));
        json_object_object_add(o, "mtu", mtu);
        json_object_object_add(o, "error", p->last_error[0] ? json_object_new_string(p->last_error) : NULL);
        return o;
}

json_object *peers_to_json(struct peers *ps)
{
        json_object *o = json_object_new_object(), *list = json_object_new_array();
        struct peer *p;

        LIST_FOREACH(p, &ps->peers, link)
                json_object_array_add(list, peer_to_json(p));
        json_object_object_add(o, "peering", json_object_new_boolean(ps->tls && ps->listener));
        json_object_object_add(o, "key_id", ps->tls ? json_object_new_string(ps->key_id) : NULL);
        json_object_object_add(o, "port", json_object_new_int(ps->port));
        json_object_object_add(o, "mdns",
                               json_object_new_string(!ps->discovery ? "off"
                                                      : discovery_is_available(ps->discovery)
                                                              ? "running"
                                                              : "waiting for avahi-daemon"));
        json_object_object_add(o, "peers", list);
        return o;
}

json_object *peers_lookup(struct peers *ps, const char *what, json_object **all)
{
        json_object *list, *found = NULL;
        size_t matches = 0;

        *all = peers_to_json(ps);
        json_object_object_get_ex(*all, "peers", &list);
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i), *name, *id, *addrs;
                bool hit = false;

                if (json_object_object_get_ex(p, "name", &name) && name &&
                    strcmp(json_object_get_string(name), what) == 0)
                        hit = true;
                if (json_object_object_get_ex(p, "node_id", &id) && id && strlen(what) >= 4 &&
                    strncmp(json_object_get_string(id), what, strlen(what)) == 0)
                        hit = true;
                if (json_object_object_get_ex(p, "addresses", &addrs))
                        for (size_t k = 0; k < json_object_array_length(addrs); k++)
                                if (strcmp(json_object_get_string(json_object_array_get_idx(addrs, k)),
                                           what) == 0)
                                        hit = true;
                if (hit) {
                        found = p;
                        matches++;
                }
        }
        return matches == 1 ? found : NULL;
}

void peers_set_message_handler(struct peers *ps, peers_message_fn fn, void *userdata)
{
        ps->on_message = fn;
        ps->on_message_userdata = userdata;
}

int peers_send(struct peers *ps, const char *node_id, json_object *msg)
{
        struct peer *p = peer_find_by_id(ps, node_id);

        if (!p || !p->conn || !p->conn->is_hello_done) {
                json_object_put(msg);
                return -ENOTCONN;
        }
        peer_conn_send(p->conn, msg);
        return 0;
}
