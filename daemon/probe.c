#include "probe.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "event.h"
#include "jsonrpc.h"
#include "log.h"
#include "macro.h"
#include "probe_internal.h"
#include "proto.h"
#include "strutil.h"

static void random_hex(char *out, size_t bytes)
{
        unsigned char buf[32];

        if (getrandom(buf, bytes, 0) != (ssize_t)bytes)
                memset(buf, 0, sizeof(buf)); /* getrandom on a booted kernel does not fail */
        for (size_t i = 0; i < bytes; i++)
                snprintf(out + 2 * i, 3, "%02x", buf[i]);
}

static void probe_free(struct probe *p)
{
        struct probes *ps = p->owner;

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

static void send_to_peer(struct probe *p, const char *type, const char *reason)
{
        send_message(p, type, reason, false);
}

/* unavailable: this node lacks what the kind needs (no device, helper not built), which is no
 * failure of the link. */
static void send_refusal(struct probe *p, const char *reason, bool unavailable)
{
        send_message(p, "probe-refused", reason, unavailable);
}

void probe_start_next(struct probes *ps);

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
        double expected =
                configured ? configured : history_baseline(ps->history, p->peer_id, k->name, k->metric);
        double value = measured(p->result, k->metric);
        json_object *e = json_object_new_object();
        bool degraded;

        *status = "ok";
        json_object_object_add(e, "metric", json_object_new_string(k->metric));
        json_object_object_add(e, "value", expected ? json_object_new_double(expected) : NULL);
        json_object_object_add(e, "source",
                               json_object_new_string(configured ? "config"
                                                      : expected ? "baseline"
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
                           m_s, k->unit, e_s, configured ? "config" : "baseline");
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
                event_emit(EVENT_PROBE_FAILED, f, ARRAY_SIZE(f), "%s probe to %s failed in phase %s: %s",
                           p->kind->name, p->peer_name, p->phase, error);
        } else {
                json_object_object_add(out, "measured", json_object_get(p->result));
                judge(ps, p, out, &status);
        }
        if (error && p->is_unavailable)
                status = "unavailable";
        json_object_object_add(out, "status", json_object_new_string(status));
        if (!error && strcmp(status, "ok") == 0) {
                struct log_field f[] = { { "peer", p->peer_name }, { "kind", p->kind->name } };

                event_emit(EVENT_PROBE_DONE, f, ARRAY_SIZE(f), "%s probe to %s done", p->kind->name,
                           p->peer_name);
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

/* ---- helpers (child processes) ---- */

#define READY_FIELDS_MAX 8
#define READY_KEY_MAX    32
#define READY_VALUE_MAX  512
#define READY_ENV_PREFIX "SPARKD_PROBE_"

/* A field of the server helper's listening line that may travel to the client helper's
 * environment: a short lower-case name, a string of printable characters or an integer. */
static bool ready_field_ok(const char *key, json_object *value)
{
        size_t len = strlen(key);

        if (len == 0 || len > READY_KEY_MAX || strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789_") != len)
                return false;
        if (json_object_is_type(value, json_type_int))
                return true;
        if (!json_object_is_type(value, json_type_string) ||
            json_object_get_string_len(value) > READY_VALUE_MAX)
                return false;
        for (const char *c = json_object_get_string(value); *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f)
                        return false;
        return (size_t)json_object_get_string_len(value) == strlen(json_object_get_string(value));
}

static bool ready_fields_ok(json_object *fields)
{
        if (!json_object_is_type(fields, json_type_object) ||
            json_object_object_length(fields) > READY_FIELDS_MAX)
                return false;
        json_object_object_foreach(fields, key, value) {
                if (!ready_field_ok(key, value))
                        return false;
        }
        return true;
}

/* The probe that owns child c, or NULL when the probe ended before its helper did. Helpers get
 * the probes object as userdata, never the probe, because a probe can go first. */
static struct probe *probe_of_child(struct probes *ps, struct child *c)
{
        struct probe *p;

        LIST_FOREACH(p, &ps->probes, link)
                if (p->child == c)
                        return p;
        return NULL;
}

static void on_child_line(struct child *c, json_object *line, void *userdata)
{
        struct probe *p = probe_of_child(userdata, c);
        json_object *v;

        if (!p)
                return;
        if (json_object_object_get_ex(line, "result", &v)) {
                json_object_put(p->result);
                p->result = json_object_get(v);
                return;
        }
        if (!json_object_object_get_ex(line, "phase", &v))
                return;
        if (!p->is_initiator && strcmp(json_object_get_string(v), "listening") == 0) {
                json_object *port, *m = json_object_new_object(), *fields = json_object_new_object();

                json_object_object_add(m, "type", json_object_new_string("probe-ready"));
                json_object_object_add(m, "id", json_object_new_string(p->id));
                if (json_object_object_get_ex(line, "port", &port))
                        json_object_object_add(m, "port", json_object_get(port));
                /* What else the listening line says is for the client helper (NCCL's unique id). */
                json_object_object_foreach(line, key, value) {
                        if (strcmp(key, "phase") != 0 && strcmp(key, "port") != 0 &&
                            strcmp(key, "address") != 0 && ready_field_ok(key, value))
                                json_object_object_add(fields, key, json_object_get(value));
                }
                if (json_object_object_length(fields))
                        json_object_object_add(m, "fields", fields);
                else
                        json_object_put(fields);
                p->phase = "running";
                (void)peers_send(p->owner->peers, p->peer_id, m);
                return;
        }
        if (p->is_initiator && p->req) {
                json_object *progress = json_object_get(line);

                json_object_object_add(progress, "id", json_object_new_string(p->id));
                json_object_object_add(progress, "kind", json_object_new_string(p->kind->name));
                api_request_notify(p->req, "probe-progress", progress);
        }
}

static void on_child_exit(struct child *c, int status, bool timed_out, const char *stderr_tail,
                          void *userdata)
{
        struct probes *ps = userdata;
        struct probe *p = probe_of_child(ps, c);
        char why[512];
        json_object *ok = NULL, *err = NULL, *v;

        if (!p)
                return;
        p->child = NULL;
        if (p->result && json_object_object_get_ex(p->result, "ok", &ok) && json_object_get_boolean(ok) &&
            p->is_initiator) {
                probe_finish(p, NULL);
                return;
        }
        if (p->result && json_object_object_get_ex(p->result, "unavailable", &v) &&
            json_object_get_boolean(v))
                p->is_unavailable = true;
        /* A helper whose libraries this node lacks (NCCL, the CUDA runtime) cannot run here. */
        if (!p->result && WIFEXITED(status) && WEXITSTATUS(status) == 127 &&
            strstr(stderr_tail, "error while loading shared libraries"))
                p->is_unavailable = true;
        if (p->result && json_object_object_get_ex(p->result, "error", &err))
                snprintf(why, sizeof(why), "%s", json_object_get_string(err));
        else if (timed_out)
                snprintf(why, sizeof(why), "the helper did not finish in time and was killed");
        else
                snprintf(why, sizeof(why), "the helper exited with status %d%s%.160s",
                         WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
                         *stderr_tail ? ": " : "", stderr_tail);
        if (p->is_initiator) {
                probe_finish(p, why);
        } else {
                if (p->result == NULL || !ok || !json_object_get_boolean(ok))
                        send_message(p, "probe-failed", why, p->is_unavailable);
                probe_free(p);
                probe_start_next(ps);
        }
}

static const struct child_ops helper_ops = {
        .on_line = on_child_line,
        .on_exit = on_child_exit,
};

/* A kind whose helper was not built (no CUDA for nccl, say) is unavailable here, not failed. */
static bool helper_is_installed(struct probe *p)
{
        char path[PATH_MAX + 32];

        snprintf(path, sizeof(path), "%s/%s", p->owner->helper_dir, p->kind->helper);
        if (access(path, X_OK) == 0)
                return true;
        snprintf(p->error, sizeof(p->error),
                 "the %s probe is not available on this node: its helper %.160s is missing (%m)",
                 p->kind->name, path);
        p->is_unavailable = true;
        return false;
}

/* The NCCL environment of this node for the request's mode, with its overrides (kinds that have
 * an environment mode parameter). */
static int helper_environment(struct probe *p)
{
        struct probes *ps = p->owner;
        enum env_mode mode = ENV_MODE_AUTO;
        const char *overrides[32];
        struct fabric_facts f;
        size_t n;
        int r;

        if (!p->kind->env_mode_param || p->env.entries)
                return 0;
        r = ps->gather_facts ? ps->gather_facts(ps->facts_userdata, &f) : -ENODATA;
        if (r < 0) {
                snprintf(p->error, sizeof(p->error),
                         "cannot read this node's fabric facts for the %s environment: %s", p->kind->name,
                         strerror(-r));
                return r;
        }
        (void)env_mode_from_string(probe_kind_param_string(p->kind, p->params, p->kind->env_mode_param),
                                   &mode);
        n = probe_kind_environment(p->kind, p->params, overrides, ARRAY_SIZE(overrides));
        r = probe_env_build(&f, mode, p->local, overrides, n, &p->env);
        fabric_facts_free(&f);
        if (r < 0)
                snprintf(p->error, sizeof(p->error), "cannot build the %s environment: %s", p->kind->name,
                         strerror(-r));
        return r;
}

/* ready: the fields of the server's listening line (checked), for the client; NULL for none. */
static int spawn_helper(struct probe *p, bool server, unsigned port, json_object *ready)
{
        struct probes *ps = p->owner;
        unsigned deadline = probe_kind_deadline_sec(p->kind, p->params);
        char *argv[48];
        /* probe_kind_helper_args writes a number at the index of its argv slot. */
        char path[PATH_MAX + 32], env_token[64], port_s[16], deadline_s[16], storage[ARRAY_SIZE(argv)][24];
        char ready_env[READY_FIELDS_MAX][sizeof(READY_ENV_PREFIX) + READY_KEY_MAX + READY_VALUE_MAX + 2];
        _cleanup_free_ char **env = NULL;
        size_t n = 0, n_env = 0, n_ready = 0;
        int r;

        if (!helper_is_installed(p))
                return -ENOENT;
        r = helper_environment(p);
        if (r < 0)
                return r;
        env = calloc(strv_length(p->env.entries) + READY_FIELDS_MAX + 2, sizeof(char *));
        if (!env)
                return -ENOMEM;
        snprintf(path, sizeof(path), "%s/%s", ps->helper_dir, p->kind->helper);
        snprintf(env_token, sizeof(env_token), "SPARKD_PROBE_TOKEN=%s", p->token);
        env[n_env++] = env_token;
        for (char **e = p->env.entries; e && *e; e++)
                env[n_env++] = *e;
        if (ready) {
                json_object_object_foreach(ready, key, value) {
                        char *d;

                        if (n_ready >= READY_FIELDS_MAX)
                                break;
                        d = ready_env[n_ready];
                        snprintf(d, sizeof(ready_env[0]), READY_ENV_PREFIX "%s=%s", key,
                                 json_object_get_string(value));
                        for (char *c = d + strlen(READY_ENV_PREFIX); *c != '='; c++)
                                *c = (char)toupper((unsigned char)*c);
                        env[n_env++] = ready_env[n_ready++];
                }
        }
        snprintf(deadline_s, sizeof(deadline_s), "%u", deadline);
        argv[n++] = path;
        argv[n++] = "--json";
        argv[n++] = "--deadline";
        argv[n++] = deadline_s;
        if (server) {
                argv[n++] = "--server";
                argv[n++] = "--bind";
                argv[n++] = p->local;
        } else {
                argv[n++] = "--client";
                argv[n++] = p->remote;
                if (port) {
                        snprintf(port_s, sizeof(port_s), "%u", port);
                        argv[n++] = "--port";
                        argv[n++] = port_s;
                }
                argv[n++] = "--bind";
                argv[n++] = p->local;
        }
        r = probe_kind_helper_args(p->kind, p->params, server ? PROBE_SIDE_SERVER : PROBE_SIDE_CLIENT, argv,
                                   &n, ARRAY_SIZE(argv), storage);
        if (r < 0) {
                snprintf(p->error, sizeof(p->error), "too many options for %.180s", path);
                return r;
        }
        argv[n] = NULL;
        r = child_spawn(ps->base, argv, env, (uint64_t)deadline * 1000000ULL, &helper_ops, ps, &p->child);
        if (r < 0)
                snprintf(p->error, sizeof(p->error), "cannot start %.180s: %s", path, strerror(-r));
        return r;
}

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
        p->phase = "request";
        if (!helper_is_installed(p)) {
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
        if (spawn_helper(p, true, 0, NULL) < 0) {
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
                    (fields && !ready_fields_ok(fields))) {
                        probe_finish(
                                p,
                                "the peer said where its helper listens in a form this node does not take");
                        return;
                }
                p->phase = "running";
                if (spawn_helper(p, false, has_port ? (unsigned)json_object_get_int(port) : 0, fields) < 0)
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
        arm_deadline(p);
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
        free(ps);
}

int probes_configure(struct probes *ps, const struct sparkd_config *c)
{
        struct timeval second = { .tv_sec = 1 };

        snprintf(ps->helper_dir, sizeof(ps->helper_dir), "%s", c->probe_helper_dir);
        history_set_limit(ps->history, c->probe_history_size);
        for (size_t i = 0; probe_kind_at(i); i++) {
                const struct probe_kind *k = probe_kind_at(i);

                ps->expect[i] = k->configured_expectation ? k->configured_expectation(c) : 0;
        }
        if (strv_copy(c->probe_kinds, &ps->sched_kinds) < 0)
                return -ENOMEM;
        ps->degraded_ratio = c->probe_degraded_ratio;
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
