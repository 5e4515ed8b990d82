#include "probe_table.h"

#include <stdlib.h>
#include <string.h>

#include "common/proto.h"
#include "daemon/base/child.h"

struct probe *probe_new(struct probes *ps)
{
        struct probe *p = calloc(1, sizeof(*p));

        if (!p)
                return NULL;
        p->owner = ps;
        LIST_INSERT_HEAD(&ps->probes, p, link);
        return p;
}

struct probe *probe_find(struct probes *ps, const char *id, bool initiator)
{
        struct probe *p;

        LIST_FOREACH(p, &ps->probes, link)
                if (p->is_initiator == initiator && strcmp(p->id, id) == 0)
                        return p;
        return NULL;
}

void probe_notify(struct probe *p, const char *phase, const char *message)
{
        json_object *o;

        if (!p->req)
                return;
        o = json_object_new_object();
        json_object_object_add(o, "id", json_object_new_string(p->id));
        json_object_object_add(o, "kind", json_object_new_string(p->kind->name));
        json_object_object_add(o, "phase", json_object_new_string(phase));
        json_object_object_add(o, "message", json_object_new_string(message));
        api_request_notify(p->req, "probe-progress", o);
}

void probe_free(struct probe *p)
{
        struct probes *ps = p->owner;

        if (p->req) {
                /* Every way a probe ends answers its caller first; this is the backstop. */
                api_request_reply_error(p->req, RPC_INTERNAL_ERROR, "the probe ended without a result",
                                        NULL);
                p->req = NULL;
        }

        if (ps->bandwidth == p) {
                ps->bandwidth = NULL;
                ps->bandwidth_ended_usec = counter_watch_now_usec();
        }
        if (p->child) {
                child_kill(p->child); /* its on_exit finds no probe: see probe_of_child */
                p->child = NULL;
        }
        if (p->deadline)
                event_free(p->deadline);
        json_object_put(p->result);
        json_object_put(p->params);
        probe_env_free(&p->env);
        LIST_REMOVE(p, link);
        free(p);
}

unsigned probe_count_running(const struct probes *ps, const char *peer_id, const struct probe *except)
{
        const struct probe *p;
        unsigned n = 0;

        LIST_FOREACH(p, &ps->probes, link)
                if (p != except && !p->is_queued &&
                    (!peer_id || (!p->is_initiator && strcmp(p->peer_id, peer_id) == 0)))
                        n++;
        return n;
}

unsigned probe_count_waiting(const struct probes *ps, const char *peer_id, const struct probe *except)
{
        const struct probe *p;
        unsigned n = 0;

        LIST_FOREACH(p, &ps->probes, link)
                if (p != except && p->is_queued &&
                    (!peer_id || (!p->is_initiator && strcmp(p->peer_id, peer_id) == 0)))
                        n++;
        return n;
}

bool probe_has_place(const struct probe *p)
{
        if (probe_count_running(p->owner, NULL, p) >= PROBE_RUNNING_MAX)
                return false;
        return p->is_initiator || probe_count_running(p->owner, p->peer_id, p) < PROBE_RUNNING_PER_PEER;
}
