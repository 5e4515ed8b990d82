#include "firewall_check.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/random.h>
#include <time.h>

#include "common/json_raw.h"
#include "common/jsonrpc.h"
#include "common/macro.h"
#include "daemon/base/log.h"
#include "daemon/peers/peer_ports.h"
#include "firewall_connect.h"
#include "firewall_listen.h"

#define MAX_PATHS     8
#define WAIT_PORT_SEC 5

/* A check's connections, made when it starts and dropped when it ends: a peer's entry lives as
 * long as the peer is up, and these held in every entry all the time were 2.2 KiB a peer. */
struct fw_paths {
        struct fw_attempt attempts[MAX_PATHS];
        char peer_ifaces[MAX_PATHS][IF_NAMESIZE];
        bool is_sparkd_path[MAX_PATHS];
};

struct fw_peer {
        LIST_ENTRY(fw_peer) link;
        struct firewall_check *owner;
        char node_id[64];
        char name[64];
        struct event *timer;    /* the next check, or the wait for the peer's port */
        char request_id[40];    /* the check under way; "" when none */
        char listen_id[40];     /* the peer's newest check of this node: only its result is taken */
        struct fw_paths *paths; /* the check under way's; NULL when none */
        size_t n_paths, n_done;
        bool is_connecting; /* the attempts of paths run */
        char port_range[32];
        /* The newest check's entries, and those of the newest check the peer made of this node:
         * arrays held as their text (json_raw.h). As trees, twelve fields an entry, they were
         * some 180 KiB at 64 nodes. */
        json_object *outbound;
        json_object *inbound;
};

struct firewall_check {
        struct event_base *base;
        struct peers *peers;
        struct links *links;
        struct fw_listeners *listeners;
        char *host_root;
        uint64_t interval_sec;
        LIST_HEAD(, fw_peer) list;
};

static const char *jstr(json_object *o, const char *key)
{
        const char *s = NULL;

        return jsonrpc_param_string(o, key, &s) > 0 && strlen(s) < 64 ? s : NULL;
}

static struct fw_peer *peer_find(struct firewall_check *fc, const char *node_id)
{
        struct fw_peer *p;

        LIST_FOREACH(p, &fc->list, link)
                if (strcmp(p->node_id, node_id) == 0)
                        return p;
        return NULL;
}

static void on_timer(evutil_socket_t fd, short what, void *userdata);

static struct fw_peer *peer_get(struct firewall_check *fc, const char *node_id)
{
        struct fw_peer *p = peer_find(fc, node_id);

        if (p)
                return p;
        p = calloc(1, sizeof(*p));
        if (!p)
                return NULL;
        p->owner = fc;
        snprintf(p->node_id, sizeof(p->node_id), "%s", node_id);
        snprintf(p->name, sizeof(p->name), "%.16s", node_id);
        p->timer = evtimer_new(fc->base, on_timer, p);
        if (!p->timer) {
                free(p);
                return NULL;
        }
        LIST_INSERT_HEAD(&fc->list, p, link);
        return p;
}

/* Ends the check under way: its connections closed and dropped, the peer left with none. */
static void stop_attempts(struct fw_peer *p)
{
        for (size_t i = 0; p->paths && i < p->n_paths; i++)
                fw_attempt_stop(&p->paths->attempts[i]);
        free(p->paths);
        p->paths = NULL;
        p->n_paths = p->n_done = 0;
        p->is_connecting = false;
}

static void peer_free(struct fw_peer *p)
{
        stop_attempts(p);
        LIST_REMOVE(p, link);
        event_free(p->timer);
        json_object_put(p->outbound);
        json_object_put(p->inbound);
        free(p);
}

static void arm(struct fw_peer *p, uint64_t sec)
{
        struct timeval tv = { .tv_sec = (time_t)sec };

        evtimer_add(p->timer, &tv);
}

static json_object *entry(const struct fw_peer *p, const char *direction, const char *iface,
                          const char *address, const char *peer_iface, const char *peer_address, int port,
                          const char *outcome, const char *detail, bool sparkd_port_works)
{
        json_object *e = json_object_new_object();
        char at[32];
        time_t now = time(NULL);
        struct tm tm;

        gmtime_r(&now, &tm);
        strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object_object_add(e, "peer", json_object_new_string(p->name));
        json_object_object_add(e, "direction", json_object_new_string(direction));
        json_object_object_add(e, "iface", iface ? json_object_new_string(iface) : NULL);
        json_object_object_add(e, "address", json_object_new_string(address));
        json_object_object_add(e, "peer_iface",
                               peer_iface && peer_iface[0] ? json_object_new_string(peer_iface) : NULL);
        json_object_object_add(e, "peer_address", json_object_new_string(peer_address));
        json_object_object_add(e, "port", json_object_new_int(port));
        json_object_object_add(e, "port_range", json_object_new_string(p->port_range));
        json_object_object_add(e, "outcome", json_object_new_string(outcome));
        json_object_object_add(e, "detail", detail && detail[0] ? json_object_new_string(detail) : NULL);
        json_object_object_add(e, "sparkd_port_works", json_object_new_boolean(sparkd_port_works));
        json_object_object_add(e, "checked_at", json_object_new_string(at));
        return e;
}

/* entries, an array made here, as held (see struct fw_peer); NULL without memory. */
static json_object *held_entries(json_object *entries)
{
        const char *text = json_object_to_json_string_ext(entries, JSON_C_TO_STRING_PLAIN);
        json_object *held = text ? json_raw_new(text) : NULL;

        json_object_put(entries);
        return held;
}

/* The outcome the previous check had on iface, to log only changes. */
static const char *previous_outcome(json_object *entries, const char *iface)
{
        for (size_t i = 0; entries && i < json_object_array_length(entries); i++) {
                json_object *e = json_object_array_get_idx(entries, i);
                const char *name = jstr(e, "iface");

                if (name && strcmp(name, iface) == 0)
                        return jstr(e, "outcome");
        }
        return NULL;
}

static void log_change(const struct fw_peer *p, json_object *previous, const char *direction,
                       const char *iface, const char *peer_address, int port, const char *outcome)
{
        const char *before = previous_outcome(previous, iface);

        if (before ? strcmp(before, outcome) == 0 : strcmp(outcome, "open") == 0)
                return;
        if (strcmp(outcome, "open") == 0)
                log_notice("firewall: TCP to ephemeral ports passes again %s %s on %s", direction, p->name,
                           iface);
        else if (strcmp(direction, "to") == 0)
                log_warning("firewall: %s %s new TCP to its ephemeral port %d (%s) from %s; sparkd's port "
                            "passes",
                            p->name, outcome, port, peer_address, iface);
        else
                log_warning("firewall: this node %s new TCP from %s (%s) to ephemeral port %d on %s; "
                            "sparkd's port "
                            "passes",
                            outcome, p->name, peer_address, port, iface);
}

static void schedule_next(struct fw_peer *p)
{
        p->request_id[0] = '\0';
        arm(p, p->owner->interval_sec);
}

static void on_attempt_done(struct fw_attempt *a, void *userdata)
{
        struct fw_peer *p = userdata;
        json_object *entries, *msg, *paths, *previous;

        if (++p->n_done < p->n_paths)
                return;
        previous = json_raw_parsed(p->outbound);
        entries = json_object_new_array();
        paths = json_object_new_array();
        for (size_t i = 0; i < p->n_paths; i++) {
                struct fw_attempt *t = &p->paths->attempts[i];
                json_object *w = json_object_new_object();

                log_change(p, previous, "to", t->iface, t->remote, t->port, t->outcome);
                json_object_array_add(entries, entry(p, "outbound", t->iface, t->local,
                                                     p->paths->peer_ifaces[i], t->remote, t->port,
                                                     t->outcome, t->detail, p->paths->is_sparkd_path[i]));
                json_object_object_add(w, "iface", json_object_new_string(t->iface));
                json_object_object_add(w, "address", json_object_new_string(t->local));
                json_object_object_add(w, "peer_address", json_object_new_string(t->remote));
                json_object_object_add(w, "outcome", json_object_new_string(t->outcome));
                json_object_object_add(w, "detail", t->detail[0] ? json_object_new_string(t->detail) : NULL);
                json_object_object_add(w, "sparkd_port_works",
                                       json_object_new_boolean(p->paths->is_sparkd_path[i]));
                json_object_array_add(paths, w);
        }
        json_object_put(previous);
        json_object_put(p->outbound);
        p->outbound = held_entries(entries);
        msg = json_object_new_object();
        json_object_object_add(msg, "type", json_object_new_string("firewall-result"));
        json_object_object_add(msg, "id", json_object_new_string(p->request_id));
        json_object_object_add(msg, "port", json_object_new_int(p->paths->attempts[0].port));
        json_object_object_add(msg, "paths", paths);
        (void)peers_send(p->owner->peers, p->node_id, msg);
        stop_attempts(p); /* each has ended: this frees them */
        schedule_next(p);
}

/* The paths to the peer: each of its addresses on the subnet of a local fabric port. -ENOMEM. */
static int find_paths(struct fw_peer *p, json_object *peer, struct link_ports *ports)
{
        json_object *addrs = NULL, *via = NULL;
        const char *via_iface = NULL;

        stop_attempts(p);
        p->paths = calloc(1, sizeof(*p->paths));
        if (!p->paths)
                return -ENOMEM;
        for (size_t i = 0; i < MAX_PATHS; i++)
                p->paths->attempts[i].fd = -1;

        if (json_object_object_get_ex(peer, "via", &via) && via)
                via_iface = jstr(via, "iface");
        if (jstr(peer, "name"))
                snprintf(p->name, sizeof(p->name), "%s", jstr(peer, "name"));
        json_object_object_get_ex(peer, "addresses", &addrs);
        for (size_t i = 0; addrs && i < json_object_array_length(addrs) && p->n_paths < MAX_PATHS; i++) {
                const char *remote = json_object_get_string(json_object_array_get_idx(addrs, i)),
                           *local = NULL;
                const struct link_port *port = peer_port_for_address(ports, remote, true, &local);
                struct fw_attempt *a = &p->paths->attempts[p->n_paths];

                if (!port || !local || strlen(remote) >= sizeof(a->remote))
                        continue;
                *a = (struct fw_attempt){ .fd = -1 };
                snprintf(a->iface, sizeof(a->iface), "%s", port->name);
                snprintf(a->local, sizeof(a->local), "%.*s", (int)strcspn(local, "/"), local);
                snprintf(a->remote, sizeof(a->remote), "%s", remote);
                p->paths->peer_ifaces[p->n_paths][0] = '\0';
                p->paths->is_sparkd_path[p->n_paths] = via_iface && strcmp(via_iface, port->name) == 0;
                p->n_paths++;
        }
        return 0;
}

static void start_check(struct fw_peer *p)
{
        struct firewall_check *fc = p->owner;
        json_object *all = NULL, *peer = peers_lookup(fc->peers, p->node_id, &all), *msg, *targets, *state;
        struct link_ports ports = { 0 };
        unsigned char bytes[8];
        int r;

        if (!peer || !json_object_object_get_ex(peer, "state", &state) ||
            strcmp(json_object_get_string(state), "up") != 0 || peer_ports_local(fc->links, &ports) < 0) {
                json_object_put(all);
                schedule_next(p);
                return;
        }
        r = find_paths(p, peer, &ports);
        link_ports_clear(&ports);
        json_object_put(all);
        if (r < 0 || p->n_paths == 0) {
                stop_attempts(p);
                schedule_next(p);
                return;
        }
        if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
                memset(bytes, 0, sizeof(bytes)); /* getrandom on a booted kernel does not fail */
        for (size_t i = 0; i < sizeof(bytes); i++)
                snprintf(p->request_id + 2 * i, 3, "%02x", bytes[i]);
        targets = json_object_new_array();
        for (size_t i = 0; i < p->n_paths; i++)
                json_object_array_add(targets, json_object_new_string(p->paths->attempts[i].remote));
        msg = json_object_new_object();
        json_object_object_add(msg, "type", json_object_new_string("firewall-open"));
        json_object_object_add(msg, "id", json_object_new_string(p->request_id));
        json_object_object_add(msg, "addresses", targets);
        if (peers_send(fc->peers, p->node_id, msg) < 0) {
                stop_attempts(p);
                schedule_next(p);
                return;
        }
        arm(p, WAIT_PORT_SEC);
}

static void on_timer(evutil_socket_t fd, short what, void *userdata)
{
        struct fw_peer *p = userdata;

        if (p->request_id[0]) { /* no port came: try again at the next interval */
                log_info("firewall: %s did not answer the firewall check within %d s", p->name,
                         WAIT_PORT_SEC);
                stop_attempts(p);
                schedule_next(p);
                return;
        }
        start_check(p);
}

/* The peer asks this node to listen: a port of the ephemeral range, and this node's netdev of
 * each address it will connect to. */
static void on_open(struct firewall_check *fc, struct fw_peer *p, const char *node_id, json_object *m)
{
        json_object *addrs = NULL, *reply = json_object_new_object(), *ifaces;
        const char *id = jstr(m, "id");
        struct link_ports ports = { 0 };
        char range[32], why[160];
        uint16_t port;
        int r;

        if (!id)
                goto drop;
        json_object_object_add(reply, "id", json_object_new_string(id));
        r = fw_listener_open(fc->listeners, fc->host_root, node_id, id, &port, range, sizeof(range), why,
                             sizeof(why));
        if (r < 0) {
                json_object_object_add(reply, "type", json_object_new_string("firewall-refused"));
                json_object_object_add(reply, "reason", json_object_new_string(why));
                /* Busy or too soon passes: the asker may come back then rather than at its next
                 * scheduled check, minutes later (a link that bounced twice asks twice). */
                if (r == -EBUSY)
                        json_object_object_add(reply, "retry_after_s",
                                               json_object_new_int(FIREWALL_PEER_MIN_GAP_SEC + 1));
                (void)peers_send(fc->peers, node_id, reply);
                return;
        }
        snprintf(p->listen_id, sizeof(p->listen_id), "%s", id);
        ifaces = json_object_new_object();
        json_object_object_get_ex(m, "addresses", &addrs);
        if (peer_ports_local(fc->links, &ports) == 0)
                for (size_t i = 0; json_object_is_type(addrs, json_type_array) &&
                                   i < json_object_array_length(addrs) && i < MAX_PATHS;
                     i++) {
                        const char *a = json_object_get_string(json_object_array_get_idx(addrs, i));
                        const struct link_port *lp =
                                a && strlen(a) < 64 ? peer_port_for_address(&ports, a, false, NULL) : NULL;

                        if (lp)
                                json_object_object_add(ifaces, a, json_object_new_string(lp->name));
                }
        link_ports_clear(&ports);
        json_object_object_add(reply, "type", json_object_new_string("firewall-port"));
        json_object_object_add(reply, "port", json_object_new_int(port));
        json_object_object_add(reply, "port_range", json_object_new_string(range));
        json_object_object_add(reply, "ifaces", ifaces);
        (void)peers_send(fc->peers, node_id, reply);
        return;
drop:
        json_object_put(reply);
}

/* The peer listens: connect from each path. */
static void on_port(struct firewall_check *fc, struct fw_peer *p, json_object *m)
{
        const char *id = jstr(m, "id"), *range = jstr(m, "port_range");
        json_object *ifaces = NULL;
        int64_t port;

        if (!id || !p->request_id[0] || strcmp(id, p->request_id) != 0 || p->is_connecting ||
            jsonrpc_param_int(m, "port", &port) <= 0 || port < 1 || port > 65535)
                return;
        evtimer_del(p->timer);
        p->is_connecting = true;
        snprintf(p->port_range, sizeof(p->port_range), "%s", range ? range : "");
        json_object_object_get_ex(m, "ifaces", &ifaces);
        for (size_t i = 0; i < p->n_paths; i++) {
                const char *iface = json_object_is_type(ifaces, json_type_object)
                                            ? jstr(ifaces, p->paths->attempts[i].remote)
                                            : NULL;

                snprintf(p->paths->peer_ifaces[i], sizeof(p->paths->peer_ifaces[i]), "%s",
                         iface && strlen(iface) < IF_NAMESIZE ? iface : "");
                p->paths->attempts[i].port = (uint16_t)port;
        }
        for (size_t i = 0, n = p->n_paths; i < n; i++)
                if (fw_attempt_start(fc->base, &p->paths->attempts[i], on_attempt_done, p) < 0) {
                        log_warning("firewall: cannot start a connection to %s: out of memory", p->name);
                        stop_attempts(p);
                        schedule_next(p);
                        return;
                }
}

/* The peer's check of this node is done: what it saw is this node's inbound side. */
static void on_result(struct firewall_check *fc, struct fw_peer *p, json_object *m)
{
        const char *id = jstr(m, "id");
        json_object *paths = NULL, *entries, *previous;
        struct link_ports ports = { 0 };
        int64_t port = 0;

        if (!id || strcmp(id, p->listen_id) != 0)
                return;
        p->listen_id[0] = '\0';
        fw_listener_close(fc->listeners, p->node_id, id);
        json_object_object_get_ex(m, "paths", &paths);
        if (!json_object_is_type(paths, json_type_array) || jsonrpc_param_int(m, "port", &port) <= 0 ||
            port < 1 || port > 65535 || peer_ports_local(fc->links, &ports) < 0)
                return;
        previous = json_raw_parsed(p->inbound);
        entries = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(paths) && i < MAX_PATHS; i++) {
                json_object *w = json_object_array_get_idx(paths, i), *works = NULL;
                const char *outcome = jstr(w, "outcome"), *here = jstr(w, "peer_address");
                const struct link_port *lp = here ? peer_port_for_address(&ports, here, false, NULL) : NULL;

                if (!outcome || !lp || !jstr(w, "address") ||
                    (strcmp(outcome, "open") != 0 && strcmp(outcome, "refused") != 0 &&
                     strcmp(outcome, "dropped") != 0))
                        continue;
                json_object_object_get_ex(w, "sparkd_port_works", &works);
                log_change(p, previous, "from", lp->name, jstr(w, "address"), (int)port, outcome);
                json_object_array_add(entries,
                                      entry(p, "inbound", lp->name, here, jstr(w, "iface"),
                                            jstr(w, "address"), (int)port, outcome, jstr(w, "detail"),
                                            works && json_object_get_boolean(works)));
        }
        link_ports_clear(&ports);
        json_object_put(previous);
        json_object_put(p->inbound);
        p->inbound = held_entries(entries);
}

static void on_peer_message(const char *node_id, const char *type, json_object *m, void *userdata)
{
        struct firewall_check *fc = userdata;
        json_object *retry;
        struct fw_peer *p;

        if (strcmp(type, "peer-down") == 0) {
                fw_listener_forget(fc->listeners, node_id);
                p = peer_find(fc, node_id);
                if (p)
                        peer_free(p);
                return;
        }
        p = peer_get(fc, node_id);
        if (!p)
                return;
        if (strcmp(type, "peer-up") == 0) {
                stop_attempts(p);
                p->request_id[0] = '\0';
                arm(p, 0);
        } else if (strcmp(type, "firewall-open") == 0)
                on_open(fc, p, node_id, m);
        else if (strcmp(type, "firewall-port") == 0)
                on_port(fc, p, m);
        else if (strcmp(type, "firewall-refused") == 0 && jstr(m, "id") &&
                 strcmp(jstr(m, "id"), p->request_id) == 0) {
                log_info("firewall: %s refused the firewall check: %s", p->name,
                         jstr(m, "reason") ? jstr(m, "reason") : "no reason given");
                evtimer_del(p->timer);
                stop_attempts(p);
                retry = json_object_object_get(m, "retry_after_s");
                if (json_object_is_type(retry, json_type_int) && json_object_get_int64(retry) > 0 &&
                    (uint64_t)json_object_get_int64(retry) < fc->interval_sec) {
                        p->request_id[0] = '\0';
                        arm(p, (uint64_t)json_object_get_int64(retry));
                } else {
                        schedule_next(p);
                }
        } else if (strcmp(type, "firewall-result") == 0)
                on_result(fc, p, m);
}

int firewall_check_new(struct event_base *base, struct peers *peers, struct links *links,
                       struct firewall_check **ret)
{
        struct firewall_check *fc = calloc(1, sizeof(*fc));
        int r;

        if (!fc)
                return -ENOMEM;
        fc->base = base;
        fc->peers = peers;
        fc->links = links;
        fc->interval_sec = FIREWALL_MIN_INTERVAL_SEC;
        LIST_INIT(&fc->list);
        fc->host_root = strdup("/");
        r = fc->host_root ? fw_listeners_new(base, &fc->listeners) : -ENOMEM;
        if (r >= 0)
                r = peers_add_message_handler(peers, "firewall-", on_peer_message, fc);
        if (r < 0) {
                firewall_check_free(fc);
                return r;
        }
        *ret = fc;
        return 0;
}

void firewall_check_free(struct firewall_check *fc)
{
        if (!fc)
                return;
        if (fc->listeners)
                peers_remove_message_handler(fc->peers, "firewall-");
        while (!LIST_EMPTY(&fc->list))
                peer_free(LIST_FIRST(&fc->list));
        fw_listeners_free(fc->listeners);
        free(fc->host_root);
        free(fc);
}

int firewall_check_configure(struct firewall_check *fc, const struct sparkd_config *config)
{
        char *root = strdup(config->host_root);
        uint64_t sec = config->recheck_usec / 1000000;

        if (!root)
                return -ENOMEM;
        free(fc->host_root);
        fc->host_root = root;
        fc->interval_sec = sec > FIREWALL_MIN_INTERVAL_SEC ? sec : FIREWALL_MIN_INTERVAL_SEC;
        return 0;
}

/* The entries of held (see struct fw_peer) added to all. */
static void add_entries(json_object *all, json_object *held)
{
        json_object *entries = json_raw_parsed(held);

        for (size_t i = 0;
             json_object_is_type(entries, json_type_array) && i < json_object_array_length(entries); i++)
                json_object_array_add(all, json_object_get(json_object_array_get_idx(entries, i)));
        json_object_put(entries);
}

json_object *firewall_check_results(struct firewall_check *fc)
{
        json_object *all = json_object_new_array();
        struct fw_peer *p;

        LIST_FOREACH(p, &fc->list, link) {
                add_entries(all, p->outbound);
                add_entries(all, p->inbound);
        }
        return all;
}
