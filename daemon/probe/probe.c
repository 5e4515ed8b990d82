#include "probe.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "daemon/base/child.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"
#include "probe_helper.h"
#include "probe_internal.h"
#include "probe_prepare.h"

static void random_hex(char *out, size_t bytes)
{
        unsigned char buf[32];

        if (getrandom(buf, bytes, 0) != (ssize_t)bytes)
                memset(buf, 0, sizeof(buf)); /* getrandom on a booted kernel does not fail */
        for (size_t i = 0; i < bytes; i++)
                snprintf(out + 2 * i, 3, "%02x", buf[i]);
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

        if (ps->bandwidth == p)
                ps->bandwidth = NULL;
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

struct probe *probe_find(struct probes *ps, const char *id, bool initiator)
{
        struct probe *p;

        LIST_FOREACH(p, &ps->probes, link)
                if (p->is_initiator == initiator && strcmp(p->id, id) == 0)
                        return p;
        return NULL;
}

void probe_send_message(struct probe *p, const char *type, const char *reason, bool unavailable)
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

static void send_to_peer(struct probe *p, const char *type, const char *reason)
{
        probe_send_message(p, type, reason, false);
}

/* unavailable: this node lacks what the kind needs (no device, helper not built), which is no
 * failure of the link. */
static void send_refusal(struct probe *p, const char *reason, bool unavailable)
{
        probe_send_message(p, "probe-refused", reason, unavailable);
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

/* ---- judging and recording ---- */

static double measured(json_object *result, const char *key)
{
        json_object *v;

        return result && json_object_object_get_ex(result, key, &v) ? json_object_get_double(v) : 0;
}

/* A helper may find the probe degraded whatever the number says (NCCL on TCP sockets where the
 * node has RDMA devices, say): its result then says why in "degraded_reason". */
static bool degraded_by_helper(struct probe *p, json_object *out, const char **status)
{
        json_object *v;
        const char *reason;

        if (!json_object_object_get_ex(p->result, "degraded_reason", &v) ||
            !json_object_is_type(v, json_type_string))
                return false;
        reason = json_object_get_string(v);
        *status = "degraded";
        json_object_object_add(out, "degraded_reason", json_object_new_string(reason));
        {
                struct log_field f[] = { { "peer", p->peer_name },
                                         { "peer_id", p->peer_id },
                                         { "kind", p->kind->name },
                                         { "reason", reason } };

                event_emit(EVENT_PROBE_DEGRADED, f, ARRAY_SIZE(f), "%s probe to %s degraded: %s",
                           p->kind->name, p->peer_name, reason);
        }
        return true;
}

/* The expectation for this peer and kind: the config's, or the learned baseline. */
static void judge(struct probes *ps, struct probe *p, json_object *out, const char **status)
{
        const struct probe_kind *k = p->kind;
        double configured = ps->expect[probe_kind_index(k)];
        double from_hardware =
                !configured && k->result_expectation ? measured(p->result, k->result_expectation) : 0;
        double expected = configured ? configured
                          : from_hardware
                                  ? from_hardware
                                  : history_baseline(ps->history, p->peer_id, k->name, p->params, k->metric);
        double value = measured(p->result, k->metric);
        json_object *e = json_object_new_object();
        bool degraded;

        *status = "ok";
        json_object_object_add(e, "metric", json_object_new_string(k->metric));
        json_object_object_add(e, "value", expected ? json_object_new_double(expected) : NULL);
        json_object_object_add(e, "source",
                               json_object_new_string(configured      ? "config"
                                                      : from_hardware ? "port speed"
                                                      : expected      ? "baseline"
                                                                      : "learning"));
        json_object_object_add(e, "ratio", json_object_new_double(ps->degraded_ratio));
        json_object_object_add(out, "expected", e);
        if (degraded_by_helper(p, out, status))
                return;
        if (!expected)
                return;
        degraded = k->higher_is_better ? value < expected * ps->degraded_ratio
                                       : value > expected / ps->degraded_ratio;
        if (!degraded)
                return;
        *status = "degraded";
        {
                char m_s[32], e_s[32];
                struct log_field f[] = { { "peer", p->peer_name }, { "peer_id", p->peer_id },
                                         { "kind", k->name },      { "measured", m_s },
                                         { "expected", e_s },      { "metric", k->metric } };

                snprintf(m_s, sizeof(m_s), "%.2f", value);
                snprintf(e_s, sizeof(e_s), "%.2f", expected);
                event_emit(EVENT_PROBE_DEGRADED, f, ARRAY_SIZE(f),
                           "%s probe to %s degraded: %s %s where %s (%s) is expected", k->name, p->peer_name,
                           m_s, k->unit, e_s,
                           configured      ? "config"
                           : from_hardware ? "port speed"
                                           : "baseline");
        }
}

void probe_finish(struct probe *p, const char *error)
{
        struct probes *ps = p->owner;
        json_object *out = json_object_new_object();
        const char *status = "failed";
        char started[32], duration[32];
        struct tm tm;

        gmtime_r(&p->started, &tm);
        strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);
        snprintf(duration, sizeof(duration), "%ld", (long)(time(NULL) - p->started));
        json_object_object_add(out, "id", json_object_new_string(p->id));
        json_object_object_add(out, "kind", json_object_new_string(p->kind->name));
        json_object_object_add(out, "peer", json_object_new_string(p->peer_name));
        json_object_object_add(out, "peer_id", json_object_new_string(p->peer_id));
        json_object_object_add(out, "started_at", json_object_new_string(started));
        json_object_object_add(out, "scheduled", json_object_new_boolean(p->is_scheduled));
        json_object_object_add(out, "local", json_object_new_string(p->local));
        json_object_object_add(out, "remote", json_object_new_string(p->remote));
        json_object_object_add(out, "params", json_object_get(p->params));
        json_object_object_add(out, "ok", json_object_new_boolean(!error));
        if (p->env.description)
                json_object_object_add(out, "environment", json_object_get(p->env.description));
        if (error && p->result)
                json_object_object_add(out, "detail", json_object_get(p->result));
        if (error) {
                struct log_field f[] = { { "peer", p->peer_name },
                                         { "peer_id", p->peer_id },
                                         { "kind", p->kind->name },
                                         { "phase", p->phase },
                                         { "reason", error } };

                json_object_object_add(out, "error", json_object_new_string(error));
                json_object_object_add(out, "phase", json_object_new_string(p->phase));
                /* A kind one of the two nodes cannot run (no GPU, no RDMA device) is how the
                 * cluster is built, not a fault: no alert, or every schedule would raise one. */
                if (p->is_unavailable || p->is_cancelled)
                        log_msg(LOG_NOTICE, "%s probe to %s %s: %s", p->kind->name, p->peer_name,
                                p->is_cancelled ? "cancelled" : "unavailable", error);
                else
                        event_emit(EVENT_PROBE_FAILED, f, ARRAY_SIZE(f),
                                   "%s probe to %s failed in phase %s: %s", p->kind->name, p->peer_name,
                                   p->phase, error);
        } else {
                json_object_object_add(out, "measured", json_object_get(p->result));
                judge(ps, p, out, &status);
                probe_diagnose(p, out, &status);
        }
        if (error && p->is_unavailable)
                status = "unavailable";
        json_object_object_add(out, "status", json_object_new_string(status));
        if (!error && strcmp(status, "ok") == 0) {
                struct log_field f[] = { { "peer", p->peer_name }, { "kind", p->kind->name } };

                event_emit(EVENT_PROBE_DONE, f, ARRAY_SIZE(f), "%s probe to %s done", p->kind->name,
                           p->peer_name);
                /* Only an ok result teaches: one the diagnosis flagged must not become normal. */
                if (!ps->expect[probe_kind_index(p->kind)])
                        history_learn(ps->history, p->peer_id, p->kind->name, p->params, p->kind->metric,
                                      measured(p->result, p->kind->metric));
        }
        history_add(ps->history, out);
        send_to_peer(p, "probe-done", NULL);
        if (p->req) {
                json_object_object_add(out, "api_version", json_object_new_int(SPARKD_API_VERSION));
                api_request_reply(p->req, json_object_get(out));
                p->req = NULL;
        }
        json_object_put(out);
        probe_free(p);
        probe_start_next(ps);
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
        struct probes *ps = p->owner;

        if (p->is_initiator) {
                probe_finish(p, error);
        } else if (!error) {
                /* The initiator is still reading its own helper's result: a probe this node
                 * started now would reach it busy and be refused. Held until its probe-done, or
                 * a short grace if that never comes, not the rest of a long deadline. */
                struct timeval grace = { .tv_sec = PROBE_DONE_GRACE_SEC };

                p->phase = "done";
                if (p->deadline)
                        evtimer_add(p->deadline, &grace);
        } else {
                probe_send_message(p, "probe-failed", error, p->is_unavailable);
                probe_free(p);
                probe_start_next(ps);
        }
}

static const struct probe_helper_ops helper_ops = {
        .on_listening = on_helper_listening,
        .on_progress = on_helper_progress,
        .on_exit = on_helper_exit,
};

/* ---- the protocol over the peer channel ---- */

static void on_deadline(evutil_socket_t fd, short what, void *userdata)
{
        struct probe *p = userdata;
        char why[128];

        snprintf(why, sizeof(why), "timeout in phase %s", p->phase);
        if (p->is_initiator) {
                probe_finish(p, why);
        } else {
                struct probes *ps = p->owner;

                probe_free(p);
                probe_start_next(ps);
        }
}

static void arm_deadline(struct probe *p)
{
        /* Later than the helpers' own deadline, so they report a timeout first. */
        struct timeval tv = { .tv_sec = probe_kind_deadline_sec(p->kind, p->params) + 5 };

        p->deadline = evtimer_new(p->owner->base, on_deadline, p);
        if (p->deadline)
                evtimer_add(p->deadline, &tv);
}

static void probe_run(struct probe *p)
{
        json_object *m;

        p->is_queued = false;
        /* The deadline and the start time count from here: the wait in the queue is not the
         * probe's time. */
        p->started = time(NULL);
        arm_deadline(p);
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

void probe_start_next(struct probes *ps)
{
        struct probe *p, *oldest = NULL;

        if (ps->bandwidth)
                return;
        LIST_FOREACH(p, &ps->probes, link)
                if (p->is_queued && (!oldest || p->started < oldest->started))
                        oldest = p;
        if (oldest)
                probe_run(oldest);
}

static void on_request(struct probes *ps, const char *node_id, json_object *m)
{
        json_object *params = NULL, *list, *peer = NULL, *v;
        const char *id = NULL, *kind = NULL, *token = NULL;
        struct probe *p;
        char reason[256];

        if (jsonrpc_param_string(m, "id", &id) <= 0 || strlen(id) != 32 ||
            jsonrpc_param_string(m, "kind", &kind) <= 0 || jsonrpc_param_string(m, "token", &token) <= 0 ||
            strlen(token) != 32)
                return;
        p = calloc(1, sizeof(*p));
        if (!p)
                return;
        p->owner = ps;
        LIST_INSERT_HEAD(&ps->probes, p, link);
        snprintf(p->id, sizeof(p->id), "%s", id);
        snprintf(p->token, sizeof(p->token), "%s", token);
        snprintf(p->peer_id, sizeof(p->peer_id), "%s", node_id);
        p->started = time(NULL);
        p->phase = "setup";
        p->kind = probe_kind_find(kind);
        if (!p->kind) {
                /* A newer peer's kind: it learns that this node cannot take part. */
                snprintf(reason, sizeof(reason), "this node's sparkd has no %.32s probe", kind);
                send_refusal(p, reason, true);
                probe_free(p);
                return;
        }
        json_object_object_get_ex(m, "params", &params);
        if (probe_kind_params(p->kind, params, &p->params, reason, sizeof(reason)) < 0) {
                send_refusal(p, reason, false);
                probe_free(p);
                return;
        }
        peers_lookup(ps->peers, node_id, &list);
        json_object_object_get_ex(list, "peers", &v);
        for (size_t i = 0; v && i < json_object_array_length(v); i++) {
                json_object *e = json_object_array_get_idx(v, i), *nid;

                if (json_object_object_get_ex(e, "node_id", &nid) && nid &&
                    strcmp(json_object_get_string(nid), node_id) == 0)
                        peer = e;
        }
        if (peer && json_object_object_get_ex(peer, "via", &v) && v) {
                json_object *local;

                json_object_object_get_ex(v, "local", &local);
                snprintf(p->local, sizeof(p->local), "%s", json_object_get_string(local));
        }
        if (peer && json_object_object_get_ex(peer, "name", &v) && v)
                snprintf(p->peer_name, sizeof(p->peer_name), "%s", json_object_get_string(v));
        json_object_put(list);
        if (p->kind->is_bandwidth && ps->bandwidth) {
                snprintf(reason, sizeof(reason), "busy: a %s probe with %s is running",
                         ps->bandwidth->kind->name, ps->bandwidth->peer_name);
                send_refusal(p, reason, false);
                probe_free(p);
                return;
        }
        if (p->kind->is_bandwidth)
                ps->bandwidth = p;
        arm_deadline(p);
        /* The initiator prepared before asking (probe_run); the responder prepares here. */
        if (probe_prepare(p) < 0 || probe_spawn_helper(p, true, 0, NULL, &helper_ops) < 0) {
                send_refusal(p, p->error, p->is_unavailable);
                probe_free(p);
        }
}

static void on_peer_message(const char *node_id, const char *type, json_object *m, void *userdata)
{
        struct probes *ps = userdata;
        const char *id = NULL, *reason = NULL;
        struct probe *p, *next;
        json_object *port = NULL, *fields = NULL;

        if (strcmp(type, "peer-down") == 0) {
                for (p = LIST_FIRST(&ps->probes); p; p = next) {
                        char why[128];

                        next = LIST_NEXT(p, link);
                        if (strcmp(p->peer_id, node_id) != 0 || p->is_queued)
                                continue;
                        snprintf(why, sizeof(why), "the peer went away during phase %s", p->phase);
                        if (p->is_initiator)
                                probe_finish(p, why);
                        else
                                probe_free(p);
                        /* the list changed under us: start over */
                        next = LIST_FIRST(&ps->probes);
                }
                probe_start_next(ps);
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
                if (p && strcmp(p->peer_id, node_id) == 0) {
                        probe_free(p);
                        probe_start_next(ps);
                }
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

/* ---- starting probes ---- */

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

static struct probe *probe_new_initiator(struct probes *ps, const struct probe_kind *kind,
                                         json_object *params)
{
        struct probe *p = calloc(1, sizeof(*p));

        if (!p) {
                json_object_put(params);
                return NULL;
        }
        p->owner = ps;
        LIST_INSERT_HEAD(&ps->probes, p, link);
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

/* Starts (or queues) a probe; on failure answers req and returns the error. */
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
        if (!p->kind->is_bandwidth || !ps->bandwidth) {
                probe_run(p);
                return 0;
        }
        LIST_FOREACH(q, &ps->probes, link)
                queued += q->is_queued;
        if (queued >= MAX_QUEUED) {
                char why[160];

                snprintf(why, sizeof(why), "busy: a %s probe with %s is running and %zu wait",
                         ps->bandwidth->kind->name, ps->bandwidth->peer_name, queued);
                if (req)
                        api_request_reply_error(req, RPC_BUSY, why, NULL);
                p->req = NULL;
                probe_free(p);
                return -EBUSY;
        }
        p->is_queued = true;
        probe_notify(p, "queued", "waiting for the running bandwidth probe");
        return 0;
}

struct history *probes_history(struct probes *ps)
{
        return ps->history;
}

void probes_set_facts_source(struct probes *ps, probes_facts_fn gather, void *userdata)
{
        ps->gather_facts = gather;
        ps->facts_userdata = userdata;
}

static void on_tick(evutil_socket_t fd, short what, void *userdata)
{
        struct probes *ps = userdata;
        time_t now = time(NULL);

        probe_schedule_tick(ps, now);
}

/* ---- set-up ---- */

int probes_new(struct event_base *base, struct peers *peers, struct store *store, const char *node_id,
               struct probes **ret)
{
        struct probes *ps = calloc(1, sizeof(*ps));
        int r;

        if (!ps)
                return -ENOMEM;
        ps->base = base;
        ps->peers = peers;
        snprintf(ps->node_id, sizeof(ps->node_id), "%s", node_id);
        LIST_INIT(&ps->probes);
        r = history_new(base, store, 1000, &ps->history);
        if (r >= 0)
                r = diagnosis_episodes_new(&ps->episodes);
        ps->tick = event_new(base, -1, EV_PERSIST, on_tick, ps);
        if (r < 0 || !ps->tick) {
                probes_free(ps);
                return r < 0 ? r : -ENOMEM;
        }
        /* RTT rounds start one interval after start, when the peers had time to come up. */
        ps->last_rtt_round = time(NULL);
        peers_set_message_handler(peers, on_peer_message, ps);
        *ret = ps;
        return 0;
}

void probes_free(struct probes *ps)
{
        if (!ps)
                return;
        peers_set_message_handler(ps->peers, NULL, NULL);
        while (!LIST_EMPTY(&ps->probes)) {
                struct probe *p = LIST_FIRST(&ps->probes);

                if (p->req) {
                        api_request_reply_error(p->req, RPC_INTERNAL_ERROR, "sparkd is stopping", NULL);
                        p->req = NULL;
                }
                probe_free(p);
        }
        if (ps->tick)
                event_free(ps->tick);
        strv_free(ps->sched_kinds);
        history_free(ps->history);
        diagnosis_episodes_free(ps->episodes);
        free(ps);
}

int probes_configure(struct probes *ps, const struct sparkd_config *c)
{
        struct timeval second = { .tv_sec = 1 };

        snprintf(ps->helper_dir, sizeof(ps->helper_dir), "%s", c->probe_helper_dir);
        snprintf(ps->host_root, sizeof(ps->host_root), "%s", c->host_root);
        ps->memory_margin = c->probe_memory_margin;
        history_set_limit(ps->history, c->probe_history_size);
        for (size_t i = 0; probe_kind_at(i); i++) {
                const struct probe_kind *k = probe_kind_at(i);

                ps->expect[i] = k->configured_expectation ? k->configured_expectation(c) : 0;
        }
        if (strv_copy(c->probe_kinds, &ps->sched_kinds) < 0)
                return -ENOMEM;
        ps->degraded_ratio = c->probe_degraded_ratio;
        ps->diagnosis = (struct diagnosis_thresholds){ .healthy_gbps = c->diagnosis_healthy_gbps,
                                                       .stale_min_gbps = c->diagnosis_stale_min_gbps,
                                                       .stale_max_gbps = c->diagnosis_stale_max_gbps };
        ps->interval_sec = c->probe_interval_usec / 1000000;
        ps->jitter_sec = c->probe_jitter_usec / 1000000;
        ps->rtt_interval_sec = c->probe_rtt_interval_usec / 1000000;
        ps->sched_duration = c->probe_duration_sec;
        ps->sched_streams = c->probe_streams;
        /* Jitter beyond the interval would skip whole slots. */
        if (ps->interval_sec && ps->jitter_sec >= ps->interval_sec)
                ps->jitter_sec = ps->interval_sec / 2;
        event_del(ps->tick);
        event_add(ps->tick, &second);
        return 0;
}
