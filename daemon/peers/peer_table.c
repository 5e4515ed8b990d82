#include "peer_table.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"
#include "peer_conn.h"
#include "peer_ports.h"

static const char *const state_names[] = {
        [PEER_DISCOVERED] = "discovered",
        [PEER_CONNECTING] = "connecting",
        [PEER_UP] = "up",
        [PEER_DOWN] = "down",
        [PEER_REJECTED] = "rejected",
        [PEER_DUPLICATE_ID] = "duplicate-id",
};

const char *peer_state_to_string(enum peer_state state)
{
        return state_names[state];
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
        if (state != PEER_UP) {
                p->is_slow = false;
                p->silent_usec = 0;
        }
}

struct peer *peer_find_by_id(struct peers *ps, const char *node_id)
{
        struct peer *p;

        LIST_FOREACH(p, &ps->peers, link)
                if (p->node_id[0] && strcmp(p->node_id, node_id) == 0)
                        return p;
        return NULL;
}

void peer_table_dispatch(struct peers *ps, const char *node_id, const char *type, json_object *msg)
{
        const struct peers_handler *best = NULL;
        bool is_to_all = strcmp(type, "peer-up") == 0 || strcmp(type, "peer-down") == 0;

        for (size_t i = 0; i < ARRAY_SIZE(ps->handlers); i++) {
                const struct peers_handler *h = &ps->handlers[i];

                if (!h->prefix[0])
                        continue;
                if (is_to_all)
                        h->fn(node_id, type, msg, h->userdata);
                else if (strncmp(type, h->prefix, strlen(h->prefix)) == 0 &&
                         (!best || strlen(h->prefix) > strlen(best->prefix)))
                        best = h;
        }
        /* Types nobody handles belong to later protocol versions: ignored, not fatal. */
        if (best)
                best->fn(node_id, type, msg, best->userdata);
}

struct peer *peer_find_unnamed_by_address(struct peers *ps, const char *address)
{
        struct peer *p;

        LIST_FOREACH(p, &ps->peers, link)
                if (!p->node_id[0] && !p->conn && strv_contains(p->addresses, address))
                        return p;
        return NULL;
}

static void on_retry(evutil_socket_t fd, short what, void *userdata)
{
        struct peer *p = userdata;

        p->owner->redial(p);
}

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
        if (ps->wake)
                ps->wake(ps);
        return p;
}

void peer_free(struct peer *p)
{
        event_free(p->retry);
        strv_free(p->addresses);
        free(p->static_spec);
        json_object_put(p->ports);
        free(p->last_error);
        LIST_REMOVE(p, link);
        free(p);
}

void peer_set_error(struct peer *p, const char *fmt, ...)
{
        char *text;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&text, fmt, ap) < 0)
                text = NULL; /* without memory the entry shows no reason rather than an old one */
        va_end(ap);
        /* A reason may carry a peer's or the TLS library's words: as long as the buffer it had. */
        if (text && strlen(text) >= PEER_ERROR_MAX)
                text[PEER_ERROR_MAX - 1] = '\0';
        free(p->last_error);
        p->last_error = text;
}

void peer_clear_error(struct peer *p)
{
        free(p->last_error);
        p->last_error = NULL;
}

void peer_merge(struct peer *into, struct peer *from)
{
        for (char **a = from->addresses; a && *a; a++)
                if (!strv_contains(into->addresses, *a))
                        (void)strv_push(&into->addresses, *a);
        if (from->static_spec && !into->static_spec)
                into->static_spec = TAKE_PTR(from->static_spec);
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

void peer_schedule_refused_retry(struct peer *p)
{
        unsigned wait = p->refused_retry_ms ? p->refused_retry_ms : REFUSED_RETRY_MIN_MS;
        unsigned delay = wait + (unsigned)random() % (wait / 4);
        struct timeval tv = { .tv_sec = delay / 1000, .tv_usec = (suseconds_t)(delay % 1000) * 1000 };

        evtimer_add(p->retry, &tv);
        p->refused_retry_ms = wait * 2 > REFUSED_RETRY_MAX_MS ? REFUSED_RETRY_MAX_MS : wait * 2;
}

bool peer_is_retry_pending(const struct peer *p)
{
        return evtimer_pending(p->retry, NULL);
}

void peer_reset_retry(struct peer *p)
{
        evtimer_del(p->retry);
        p->backoff_ms = BACKOFF_MIN_MS;
        p->refused_retry_ms = 0;
}

static void report_mtu_mismatch(struct peer *p, json_object *remote_port)
{
        const char *peer_iface = peer_port_json_ifname(remote_port);
        char local_s[16], peer_s[16];
        struct log_field f[] = { { "peer", peer_label(p) },  { "peer_id", p->node_id },
                                 { "iface", p->via_ifname }, { "mtu", local_s },
                                 { "peer_mtu", peer_s },     { "peer_iface", peer_iface } };

        snprintf(local_s, sizeof(local_s), "%u", p->local_mtu);
        snprintf(peer_s, sizeof(peer_s), "%u", p->peer_mtu);

        event_emit(
                EVENT_PEER_MTU_MISMATCH, f, ARRAY_SIZE(f),
                "MTU mismatch on the cable to %s: %s has MTU %u here, %s has %u there; traffic larger than "
                "the smaller MTU is dropped",
                peer_label(p), p->via_ifname, p->local_mtu, peer_iface ? peer_iface : "its port",
                p->peer_mtu);
}

/* Compares the MTU of the local port that reaches the peer with the peer's port at the other
 * end of that cable (the one holding the address we talk to). */
void peer_check_mtu(struct peer *p)
{
        struct link_ports mine = { 0 };
        const struct link_port *local_port;
        json_object *remote_port;

        (void)peer_ports_local(p->owner->links, &mine);
        local_port = peer_port_for_address(&mine, p->via_local, false, NULL);
        remote_port = peer_port_in_json(p->ports, p->via_remote);
        p->local_mtu = local_port ? local_port->mtu : 0;
        p->peer_mtu = remote_port ? peer_port_json_mtu(remote_port) : 0;
        if (local_port)
                snprintf(p->via_ifname, sizeof(p->via_ifname), "%s", local_port->name);
        link_ports_clear(&mine);
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
        report_mtu_mismatch(p, remote_port);
}

bool peer_is_learned(const struct peer *p)
{
        return p->is_learned && !p->static_spec && !p->is_discovered;
}

void peer_log_inbound_reject(struct peers *ps, const char *remote, const char *why)
{
        time_t now = time(NULL);
        struct log_field f[] = { { "peer", remote }, { "address", remote } };
        char more[64] = "";

        /* Junk on the port must not become junk in the journal: one line per interval, counted. */
        if (now - ps->last_reject_log < REJECT_LOG_INTERVAL) {
                ps->rejects_unlogged++;
                return;
        }
        if (ps->rejects_unlogged)
                snprintf(more, sizeof(more), " (and %u more since the last report)", ps->rejects_unlogged);
        event_emit(EVENT_PEER_REJECTED, f, ARRAY_SIZE(f), "rejected a connection from %s: %s%s", remote, why,
                   more);
        ps->last_reject_log = now;
        ps->rejects_unlogged = 0;
}

/* The slots of the seconds since the newest written are of a minute ago or older: emptied. */
static void sent_advance(struct peers *ps, uint64_t second)
{
        for (uint64_t s = ps->sent_second + 1; s <= second && s <= ps->sent_second + 60; s++)
                ps->sent_by_second[s % 60] = 0;
        if (second > ps->sent_second)
                ps->sent_second = second;
}

void peer_count_sent(struct peers *ps, size_t n)
{
        uint64_t second = peer_now_usec() / 1000000;

        sent_advance(ps, second);
        ps->sent_by_second[second % 60] += n;
        ps->bytes_sent += n;
}

uint64_t peer_sent_last_minute(struct peers *ps)
{
        uint64_t sum = 0;

        sent_advance(ps, peer_now_usec() / 1000000);
        for (size_t i = 0; i < 60; i++)
                sum += ps->sent_by_second[i];
        return sum;
}
