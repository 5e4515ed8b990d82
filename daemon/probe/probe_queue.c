#include "probe_queue.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "common/proto.h"
#include "daemon/peers/peers.h"
#include "probe_exchange.h"
#include "probe_load.h"
#include "probe_table.h"

/* Probes that wait for the bandwidth slot; more are refused as busy. */
#define MAX_QUEUED 8

static void random_hex(char *out, size_t bytes)
{
        unsigned char buf[32];

        if (getrandom(buf, bytes, 0) != (ssize_t)bytes)
                memset(buf, 0, sizeof(buf)); /* getrandom on a booted kernel does not fail */
        for (size_t i = 0; i < bytes; i++)
                snprintf(out + 2 * i, 3, "%02x", buf[i]);
}

/* Finds the peer and fills in who and where; an error sentence in p->error when it cannot. */
static int probe_target(struct probes *ps, struct probe *p, const char *what)
{
        json_object *all, *peer = peers_lookup(ps->peers, what, &all), *v, *via;
        int r = 0;

        if (!peer) {
                snprintf(p->error, sizeof(p->error),
                         "no peer \"%s\" (by name, node id or address): see sparkc peers", what);
                r = -ENOENT;
        } else if (!json_object_object_get_ex(peer, "state", &v) ||
                   strcmp(json_object_get_string(v), "up") != 0) {
                snprintf(p->error, sizeof(p->error), "peer %s is %s, not up", what,
                         json_object_get_string(v));
                r = -ENOTCONN;
        } else {
                json_object *id, *name, *local, *remote;

                json_object_object_get_ex(peer, "node_id", &id);
                json_object_object_get_ex(peer, "name", &name);
                json_object_object_get_ex(peer, "via", &via);
                json_object_object_get_ex(via, "local", &local);
                json_object_object_get_ex(via, "remote", &remote);
                snprintf(p->peer_id, sizeof(p->peer_id), "%s", json_object_get_string(id));
                snprintf(p->peer_name, sizeof(p->peer_name), "%s",
                         name ? json_object_get_string(name) : what);
                snprintf(p->local, sizeof(p->local), "%s", json_object_get_string(local));
                snprintf(p->remote, sizeof(p->remote), "%s", json_object_get_string(remote));
        }
        json_object_put(all);
        return r;
}

/* Refuses p, not started, with why: the caller learns it, the probe is gone. */
static int refuse(struct probe *p, const char *why)
{
        if (p->req)
                api_request_reply_error(p->req, RPC_BUSY, why, NULL);
        p->req = NULL;
        probe_free(p);
        return -EBUSY;
}

static struct probe *probe_new_initiator(struct probes *ps, const struct probe_kind *kind,
                                         json_object *params)
{
        struct probe *p = probe_new(ps);

        if (!p) {
                json_object_put(params);
                return NULL;
        }
        random_hex(p->id, 16);
        random_hex(p->token, 16);
        p->kind = kind;
        p->is_initiator = true;
        p->params = params;
        p->started = time(NULL);
        p->phase = "queued";
        return p;
}

/* Nobody waits for the answer any more (sparkc interrupted): a probe still queued is dropped, a
 * running one is cancelled and recorded as such. */
static void on_caller_gone(void *userdata)
{
        struct probe *p = userdata;

        if (p->is_queued) {
                api_request_reply_error(p->req, RPC_INTERNAL_ERROR, "cancelled", NULL);
                p->req = NULL;
                probe_free(p);
                return;
        }
        p->is_cancelled = true;
        probe_finish(p, "cancelled: the caller went away");
}

int probe_start(struct probes *ps, const struct probe_kind *kind, const char *peer, json_object *params,
                struct api_request *req, bool scheduled)
{
        struct probe *p = probe_new_initiator(ps, kind, params);
        size_t queued = 0;
        struct probe *q;

        if (!p)
                return -ENOMEM;
        p->req = req;
        p->is_scheduled = scheduled;
        if (probe_target(ps, p, peer) < 0) {
                if (req)
                        api_request_reply_error(req, RPC_INVALID_PARAMS, p->error, NULL);
                p->req = NULL;
                probe_free(p);
                return -ENOENT;
        }
        if (req)
                api_request_on_orphan(req, on_caller_gone, p);
        /* Asked for by hand: it runs, but what it measures is the link's share left by the job. */
        if (p->kind->is_bandwidth && !scheduled)
                (void)probe_fabric_busy(ps, p->busy, sizeof(p->busy));
        if ((!p->kind->is_bandwidth || !ps->bandwidth) && probe_has_place(p)) {
                probe_run(p);
                return 0;
        }
        LIST_FOREACH(q, &ps->probes, link)
                queued += q->is_queued && q->is_initiator;
        if (queued >= MAX_QUEUED && p->kind->is_bandwidth && ps->bandwidth) {
                char why[160];

                snprintf(why, sizeof(why), "busy: a %s probe with %s is running and %zu wait",
                         ps->bandwidth->kind->name, ps->bandwidth->peer_name, queued);
                return refuse(p, why);
        }
        if (probe_count_waiting(ps, NULL, p) >= PROBE_WAITING_MAX) {
                char why[160];

                snprintf(why, sizeof(why), "busy: %u probes run here and %u wait (at most %u and %u)",
                         probe_count_running(ps, NULL, p), probe_count_waiting(ps, NULL, p),
                         PROBE_RUNNING_MAX, PROBE_WAITING_MAX);
                return refuse(p, why);
        }
        p->is_queued = true;
        probe_notify(p, "queued",
                     p->kind->is_bandwidth && ps->bandwidth
                             ? "waiting for the running bandwidth probe"
                             : "waiting for a place: as many probes as this node runs at once are running");
        return 0;
}

void probe_start_next(struct probes *ps)
{
        struct probe *p, *oldest;

        /* Starting one may end it at once, which calls here again: the list is read anew. */
        for (;;) {
                oldest = NULL;
                LIST_FOREACH(p, &ps->probes, link) {
                        if (!p->is_queued || (p->is_initiator && p->kind->is_bandwidth && ps->bandwidth) ||
                            !probe_has_place(p))
                                continue;
                        if (!oldest || p->started < oldest->started)
                                oldest = p;
                }
                if (!oldest)
                        return;
                if (oldest->is_initiator)
                        probe_run(oldest);
                else
                        probe_answer(oldest);
        }
}
