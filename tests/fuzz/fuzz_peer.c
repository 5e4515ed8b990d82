/*
 * What a peer sends once TLS is up: newline-separated JSON messages, the hello first. Lines go to
 * one inbound connection until it is closed (protocol error, duplicate, itself), then to the next
 * one, as a peer that reconnects would; the peer table lives for one input.
 */
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/base/log.h"
#include "daemon/peers/peer_session.h"
#include "fuzz.h"

static struct event_base *base;

static void on_deadline(evutil_socket_t fd, short what, void *userdata)
{
}

static void on_message(const char *node_id, const char *type, json_object *m, void *userdata)
{
        (void)json_object_to_json_string(m);
}

static struct peer_conn *inbound(struct peers *ps)
{
        struct peer_conn *c = calloc(1, sizeof(*c));

        if (!c)
                abort();
        c->deadline = evtimer_new(base, on_deadline, c);
        if (!c->deadline)
                abort();
        c->is_tls_up = true;
        snprintf(c->remote, sizeof(c->remote), "10.0.0.2");
        snprintf(c->local, sizeof(c->local), "10.0.0.1");
        peer_session_attach(ps, c, NULL);
        return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct peers *ps = calloc(1, sizeof(*ps));
        struct peer_conn *c;
        const char *p = (const char *)data, *end = p + size;

        if (!base) {
                base = event_base_new();
                if (!base)
                        abort();
                log_set_max_level(LOG_EMERG);
        }
        if (!ps)
                abort();
        ps->base = base;
        snprintf(ps->node_id, sizeof(ps->node_id), "0123456789abcdef0123456789abcdef");
        snprintf(ps->name, sizeof(ps->name), "fuzz");
        LIST_INIT(&ps->peers);
        LIST_INIT(&ps->conns);
        ps->handlers[0] = (struct peers_handler){ .prefix = "probe-", .fn = on_message };
        c = inbound(ps);

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                char *line = malloc(len + 1);

                if (!line)
                        abort();
                memcpy(line, p, len);
                line[len] = '\0';
                if (peer_session_receive(c, line, len) < 0)
                        c = inbound(ps); /* closed and freed */
                free(line);
                p += len + 1;
        }

        while (!LIST_EMPTY(&ps->peers))
                peer_remove(LIST_FIRST(&ps->peers));
        while (!LIST_EMPTY(&ps->conns))
                peer_session_free(LIST_FIRST(&ps->conns));
        free(ps);
        return 0;
}
