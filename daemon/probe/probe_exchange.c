#include "probe_exchange.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/jsonrpc.h"
#include "common/proto.h"
#include "daemon/base/api.h"
#include "daemon/base/heap_trim.h"
#include "daemon/peers/peers.h"
#include "probe_helper.h"
#include "probe_judge.h"
#include "probe_prepare.h"
#include "probe_table.h"

/* How long a responder whose helper is done waits for the initiator's probe-done. */
#define PROBE_DONE_GRACE_SEC 10

static void probe_ended(struct probes *ps)
{
        if (ps->on_probe_ended)
                ps->on_probe_ended(ps);
        /* The last of a burst (rtt to every peer at once, each with its helper's pipes and
         * output) is over: glibc keeps the freed pages between live chunks resident for good,
         * unless told to give them back. */
        if (LIST_EMPTY(&ps->probes))
                heap_trim_soon();
}

/* Sends {type, id, reason?, unavailable?} to the probe's peer. unavailable: this node lacks what
 * the kind needs (no device, helper not built), which is no failure of the link. */
static void send_message(struct probe *p, const char *type, const char *reason, bool unavailable)
{
        json_object *m = json_object_new_object();

        json_object_object_add(m, "type", json_object_new_string(type));
        json_object_object_add(m, "id", json_object_new_string(p->id));
        if (reason)
                json_object_object_add(m, "reason", json_object_new_string(reason));
        if (unavailable)
                json_object_object_add(m, "unavailable", json_object_new_boolean(true));
        (void)peers_send(p->owner->peers, p->peer_id, m);
}

/* A responder's part is over: nothing to record here, the initiator does. */
static void end_responder(struct probe *p)
{
        struct probes *ps = p->owner;

        probe_free(p);
        probe_ended(ps);
}

void probe_finish(struct probe *p, const char *error)
{
        struct probes *ps = p->owner;
        json_object *out = probe_judge(p, error);

        send_message(p, "probe-done", NULL, false);
        if (p->req) {
                json_object *reply = NULL;

                /* A copy: the API adds its envelope to the reply, which the history must not keep. */
                if (json_object_deep_copy(out, &reply, NULL) < 0)
                        reply = json_object_get(out);
                api_request_reply(p->req, reply);
                p->req = NULL;
        }
        json_object_put(out);
        probe_free(p);
        probe_ended(ps);
}

static void on_deadline(evutil_socket_t fd, short what, void *userdata)
{
        struct probe *p = userdata;
        char why[128];

        snprintf(why, sizeof(why), "timeout in phase %s", p->phase);
        if (p->is_initiator)
                probe_finish(p, why);
        else
                end_responder(p);
}

/* Later than the helpers' own deadline, so they report a timeout first. */
static unsigned probe_deadline_sec(struct probe *p)
{
        return probe_kind_deadline_sec(p->kind, p->params) + 5;
}

/* Ends p seconds from now unless something else ends it first; a later call moves the end. */
static void arm_deadline(struct probe *p, unsigned seconds)
{
        struct timeval tv = { .tv_sec = seconds };

        if (!p->deadline)
                p->deadline = evtimer_new(p->owner->base, on_deadline, p);
        if (p->deadline)
                evtimer_add(p->deadline, &tv);
}

/* ---- what the helper says ---- */

static void on_helper_listening(struct probe *p, json_object *line)
{
        p->phase = "running";
        (void)peers_send(p->owner->peers, p->peer_id, probe_ready_message(p->id, line));
}

static void on_helper_progress(struct probe *p, json_object *line)
{
        json_object *progress;

        if (!p->req)
                return;
        progress = json_object_get(line);
        json_object_object_add(progress, "id", json_object_new_string(p->id));
        json_object_object_add(progress, "kind", json_object_new_string(p->kind->name));
        api_request_notify(p->req, "probe-progress", progress);
}

static void on_helper_exit(struct probe *p, const char *error)
{
        if (p->is_initiator) {
                probe_finish(p, error);
        } else if (!error) {
                /* The initiator is still reading its own helper's result: a probe this node
                 * started now would reach it busy and be refused. Held until its probe-done, or
                 * a short grace if that never comes, not the rest of a long deadline. */
                p->phase = "done";
                arm_deadline(p, PROBE_DONE_GRACE_SEC);
        } else {
                send_message(p, "probe-failed", error, p->is_unavailable);
                end_responder(p);
        }
}

static const struct probe_helper_ops helper_ops = {
        .on_listening = on_helper_listening,
        .on_progress = on_helper_progress,
        .on_exit = on_helper_exit,
};

/* ---- the messages over the peer channel ---- */

void probe_run(struct probe *p)
{
        json_object *m;

        p->is_queued = false;
        /* The deadline and the start time count from here: the wait in the queue is not the
         * probe's time. */
        p->started = time(NULL);
        arm_deadline(p, probe_deadline_sec(p));
        p->phase = "request";
        if (probe_prepare(p) < 0 || !probe_helper_is_installed(p)) {
                probe_finish(p, p->error);
                return;
        }
        if (p->kind->is_bandwidth)
                p->owner->bandwidth = p;
        m = json_object_new_object();
        json_object_object_add(m, "type", json_object_new_string("probe-request"));
        json_object_object_add(m, "id", json_object_new_string(p->id));
        json_object_object_add(m, "kind", json_object_new_string(p->kind->name));
        json_object_object_add(m, "token", json_object_new_string(p->token));
        json_object_object_add(m, "params", json_object_get(p->params));
        if (peers_send(p->owner->peers, p->peer_id, m) < 0) {
                probe_finish(p, "the peer is not connected");
                return;
        }
        probe_notify(p, "request", "asking the peer");
}

/* The responder's side of the path: the peer's name, and this node's address toward it. */
static void responder_target(struct probes *ps, struct probe *p)
{
        json_object *all = NULL, *peer = peers_lookup(ps->peers, p->peer_id, &all), *v;

        if (peer && json_object_object_get_ex(peer, "via", &v) && v) {
                json_object *local;

                json_object_object_get_ex(v, "local", &local);
                snprintf(p->local, sizeof(p->local), "%s", json_object_get_string(local));
        }
        if (peer && json_object_object_get_ex(peer, "name", &v) && v)
                snprintf(p->peer_name, sizeof(p->peer_name), "%s", json_object_get_string(v));
        json_object_put(all);
}

void probe_answer(struct probe *p)
{
        p->is_queued = false;
        p->phase = "setup";
        /* The initiator prepared before asking (probe_run); the responder prepares here. */
        if (probe_prepare(p) < 0 || probe_spawn_helper(p, true, 0, NULL, &helper_ops) < 0) {
                struct probes *ps = p->owner;

                send_message(p, "probe-refused", p->error, p->is_unavailable);
                probe_free(p);
                probe_ended(ps);
        }
}

/* No place to run p now: it may wait unless its peer, or all peers, have as many waiting as
 * allowed; then it is refused with the limits (true). */
static bool refuse_past_waiting(struct probe *p)
{
        struct probes *ps = p->owner;
        unsigned of_peer = probe_count_waiting(ps, p->peer_id, p), all = probe_count_waiting(ps, NULL, p);
        char reason[256];

        if (of_peer < PROBE_WAITING_PER_PEER && all < PROBE_WAITING_MAX)
                return false;
        snprintf(reason, sizeof(reason),
                 "busy: %u probes run here, %u of them for this node (at most %u in all, %u per peer), "
                 "and %u wait, %u of this node's (at most %u in all, %u per peer)",
                 probe_count_running(ps, NULL, p), probe_count_running(ps, p->peer_id, p), PROBE_RUNNING_MAX,
                 PROBE_RUNNING_PER_PEER, all, of_peer, PROBE_WAITING_MAX, PROBE_WAITING_PER_PEER);
        send_message(p, "probe-refused", reason, false);
        probe_free(p);
        return true;
}

static void on_request(struct probes *ps, const char *node_id, json_object *m)
{
        json_object *params = NULL;
        const char *id = NULL, *kind = NULL, *token = NULL;
        struct probe *p;
        char reason[256];

        if (jsonrpc_param_string(m, "id", &id) <= 0 || strlen(id) != 32 ||
            jsonrpc_param_string(m, "kind", &kind) <= 0 || jsonrpc_param_string(m, "token", &token) <= 0 ||
            strlen(token) != 32)
                return;
        p = probe_new(ps);
        if (!p)
                return;
        snprintf(p->id, sizeof(p->id), "%s", id);
        snprintf(p->token, sizeof(p->token), "%s", token);
        snprintf(p->peer_id, sizeof(p->peer_id), "%s", node_id);
        p->started = time(NULL);
        p->phase = "setup";
        p->kind = probe_kind_find(kind);
        if (!p->kind) {
                /* A newer peer's kind: it learns that this node cannot take part. */
                snprintf(reason, sizeof(reason), "this node's sparkd has no %.32s probe", kind);
                send_message(p, "probe-refused", reason, true);
                probe_free(p);
                return;
        }
        json_object_object_get_ex(m, "params", &params);
        if (probe_kind_params(p->kind, params, &p->params, reason, sizeof(reason)) < 0) {
                send_message(p, "probe-refused", reason, false);
                probe_free(p);
                return;
        }
        /* Before anything costs: a peer asking too much is refused at once. */
        if (!probe_has_place(p) && refuse_past_waiting(p))
                return;
        responder_target(ps, p);
        if (p->kind->is_bandwidth && ps->bandwidth) {
                snprintf(reason, sizeof(reason), "busy: a %s probe with %s is running",
                         ps->bandwidth->kind->name, ps->bandwidth->peer_name);
                send_message(p, "probe-refused", reason, false);
                probe_free(p);
                return;
        }
        if (p->kind->is_bandwidth)
                ps->bandwidth = p;
        /* A waiting one ends at the deadline too: its initiator gives up by then. */
        arm_deadline(p, probe_deadline_sec(p));
        if (probe_has_place(p)) {
                probe_answer(p);
                return;
        }
        p->is_queued = true;
        p->phase = "waiting";
}

static void on_peer_message(const char *node_id, const char *type, json_object *m, void *userdata)
{
        struct probes *ps = userdata;
        const char *id = NULL, *reason = NULL;
        struct probe *p, *next;
        json_object *port = NULL, *fields = NULL;

        if (strcmp(type, "peer-up") == 0) {
                if (ps->on_peer_up)
                        ps->on_peer_up(ps);
                return;
        }
        if (strcmp(type, "peer-down") == 0) {
                for (p = LIST_FIRST(&ps->probes); p; p = next) {
                        char why[128];

                        next = LIST_NEXT(p, link);
                        if (strcmp(p->peer_id, node_id) != 0 || (p->is_queued && p->is_initiator))
                                continue;
                        snprintf(why, sizeof(why), "the peer went away during phase %s", p->phase);
                        if (p->is_initiator)
                                probe_finish(p, why);
                        else
                                probe_free(p);
                        /* the list changed under us: start over */
                        next = LIST_FIRST(&ps->probes);
                }
                probe_ended(ps);
                return;
        }
        if (strcmp(type, "probe-request") == 0) {
                on_request(ps, node_id, m);
                return;
        }
        if (jsonrpc_param_string(m, "id", &id) <= 0)
                return;
        (void)jsonrpc_param_string(m, "reason", &reason);
        if (strcmp(type, "probe-done") == 0) {
                p = probe_find(ps, id, false);
                if (p && strcmp(p->peer_id, node_id) == 0)
                        end_responder(p);
                return;
        }
        p = probe_find(ps, id, true);
        if (!p || strcmp(p->peer_id, node_id) != 0)
                return;
        if (strcmp(type, "probe-ready") == 0) {
                bool has_port = json_object_object_get_ex(m, "port", &port);

                json_object_object_get_ex(m, "fields", &fields);
                if ((has_port && (!json_object_is_type(port, json_type_int) ||
                                  json_object_get_int(port) < 1 || json_object_get_int(port) > 65535)) ||
                    (fields && !probe_ready_fields_ok(fields))) {
                        probe_finish(
                                p,
                                "the peer said where its helper listens in a form this node does not take");
                        return;
                }
                p->phase = "running";
                if (probe_spawn_helper(p, false, has_port ? (unsigned)json_object_get_int(port) : 0, fields,
                                       &helper_ops) < 0)
                        probe_finish(p, p->error);
        } else if (strcmp(type, "probe-refused") == 0 || strcmp(type, "probe-failed") == 0) {
                json_object *unavailable;
                char why[640];

                if (json_object_object_get_ex(m, "unavailable", &unavailable) &&
                    json_object_get_boolean(unavailable))
                        p->is_unavailable = true;

                snprintf(why, sizeof(why), "the peer %s: %s",
                         strcmp(type, "probe-refused") == 0 ? "refused" : "failed",
                         reason ? reason : "no reason given");
                probe_finish(p, why);
        }
}

void probe_exchange_attach(struct probes *ps, void (*on_ended)(struct probes *ps))
{
        ps->on_probe_ended = on_ended;
        (void)peers_add_message_handler(ps->peers, "probe-", on_peer_message, ps);
}

void probe_exchange_detach(struct probes *ps)
{
        peers_remove_message_handler(ps->peers, "probe-");
        ps->on_probe_ended = NULL;
}
