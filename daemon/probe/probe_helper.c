#include "probe_helper.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/strutil.h"
#include "daemon/base/child.h"

#define READY_FIELDS_MAX 8
#define READY_KEY_MAX    32
#define READY_VALUE_MAX  512
#define READY_ENV_PREFIX "SPARKD_PROBE_"
/* Seconds past its --deadline before a helper is killed; under probe_exchange.c's 5 s margin. */
#define HELPER_KILL_GRACE_SEC 2

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

bool probe_ready_fields_ok(json_object *fields)
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

enum helper_line probe_helper_line_kind(json_object *line)
{
        const char *phase = NULL;

        if (!json_object_is_type(line, json_type_object))
                return HELPER_LINE_OTHER;
        if (json_object_object_get_ex(line, "result", NULL))
                return HELPER_LINE_RESULT;
        /* A phase that is no string (null included) is no phase: the line is not shown. */
        if (jsonrpc_param_string(line, "phase", &phase) <= 0)
                return HELPER_LINE_OTHER;
        return strcmp(phase, "listening") == 0 ? HELPER_LINE_LISTENING : HELPER_LINE_PROGRESS;
}

json_object *probe_ready_message(const char *id, json_object *line)
{
        json_object *port, *m = json_object_new_object(), *fields = json_object_new_object();

        json_object_object_add(m, "type", json_object_new_string("probe-ready"));
        json_object_object_add(m, "id", json_object_new_string(id));
        if (json_object_object_get_ex(line, "port", &port))
                json_object_object_add(m, "port", json_object_get(port));
        /* What else the listening line says is for the client helper (NCCL's unique id). */
        json_object_object_foreach(line, key, value) {
                if (strcmp(key, "phase") != 0 && strcmp(key, "port") != 0 && strcmp(key, "address") != 0 &&
                    ready_field_ok(key, value))
                        json_object_object_add(fields, key, json_object_get(value));
        }
        if (json_object_object_length(fields))
                json_object_object_add(m, "fields", fields);
        else
                json_object_put(fields);
        return m;
}

static void on_child_line(struct child *c, json_object *line, void *userdata)
{
        struct probe *p = probe_of_child(userdata, c);
        enum helper_line kind = probe_helper_line_kind(line);
        json_object *v;

        if (!p || kind == HELPER_LINE_OTHER)
                return;
        if (kind == HELPER_LINE_RESULT) {
                json_object_object_get_ex(line, "result", &v);
                json_object_put(p->result);
                p->result = json_object_get(v);
                return;
        }
        if (!p->is_initiator && kind == HELPER_LINE_LISTENING)
                p->helper_ops->on_listening(p, line);
        else if (p->is_initiator)
                p->helper_ops->on_progress(p, line);
}

static void on_child_exit(struct child *c, int status, bool timed_out, const char *stderr_tail,
                          void *userdata)
{
        struct probe *p = probe_of_child(userdata, c);
        char why[512];
        json_object *ok = NULL, *err = NULL, *v;

        if (!p)
                return;
        p->child = NULL;
        if (p->result && json_object_object_get_ex(p->result, "ok", &ok) && json_object_get_boolean(ok)) {
                p->helper_ops->on_exit(p, NULL);
                return;
        }
        if (p->result && json_object_object_get_ex(p->result, "unavailable", &v) &&
            json_object_get_boolean(v))
                p->is_unavailable = true;
        /* A helper whose libraries this node lacks (NCCL, the CUDA runtime) cannot run here. */
        if (!p->result && WIFEXITED(status) && WEXITSTATUS(status) == 127 &&
            strstr(stderr_tail, "error while loading shared libraries"))
                p->is_unavailable = true;
        if (p->result && json_object_object_get_ex(p->result, "error", &err)) {
                const char *phase = NULL;

                /* A helper past its deadline says only "timeout" and, beside it, its own phase
                 * (connecting, reverse, latency), finer than the probe's: the error says which. */
                if (strcmp(json_object_get_string(err), "timeout") == 0 &&
                    jsonrpc_param_string(p->result, "phase", &phase) > 0)
                        snprintf(why, sizeof(why),
                                 "timeout: the helper's deadline passed in its phase %.64s", phase);
                else
                        snprintf(why, sizeof(why), "%s", json_object_get_string(err));
        } else if (timed_out)
                snprintf(why, sizeof(why), "the helper did not finish in time and was killed");
        else if (WIFSIGNALED(status))
                /* Killed before its result: by the OOM killer or by hand, never "status 137". */
                snprintf(why, sizeof(why),
                         "the helper %s was killed by signal %d (%s) before its result%s%.160s",
                         p->kind->helper, WTERMSIG(status), strsignal(WTERMSIG(status)),
                         *stderr_tail ? ": " : "", stderr_tail);
        else
                snprintf(why, sizeof(why), "the helper exited with status %d%s%.160s", WEXITSTATUS(status),
                         *stderr_tail ? ": " : "", stderr_tail);
        p->helper_ops->on_exit(p, why);
}

static const struct child_ops helper_ops = {
        .on_line = on_child_line,
        .on_exit = on_child_exit,
};

bool probe_helper_find(const struct probes *ps, const struct probe_kind *kind,
                       char path[PROBE_HELPER_PATH_MAX])
{
        snprintf(path, PROBE_HELPER_PATH_MAX, "%s/%s", ps->helper_dir, kind->helper);
        return access(path, X_OK) == 0;
}

/* A kind whose helper was not built (no CUDA for nccl, say) is unavailable here, not failed. */
bool probe_helper_is_installed(struct probe *p)
{
        char path[PROBE_HELPER_PATH_MAX];

        if (probe_helper_find(p->owner, p->kind, path))
                return true;
        snprintf(p->error, sizeof(p->error),
                 "the %s probe is not available on this node: its helper %.160s is missing (%m)",
                 p->kind->name, path);
        p->is_unavailable = true;
        return false;
}

int probe_spawn_helper(struct probe *p, bool server, unsigned port, json_object *ready,
                       const struct probe_helper_ops *ops)
{
        struct probes *ps = p->owner;
        unsigned deadline = probe_kind_deadline_sec(p->kind, p->params);
        char *argv[48];
        /* probe_kind_helper_args writes a number at the index of its argv slot. */
        char path[PROBE_HELPER_PATH_MAX], env_token[64], port_s[16], deadline_s[16],
                storage[ARRAY_SIZE(argv)][24];
        char ready_env[READY_FIELDS_MAX][sizeof(READY_ENV_PREFIX) + READY_KEY_MAX + READY_VALUE_MAX + 2];
        _cleanup_free_ char **env = NULL;
        struct child_limits limits;
        size_t n = 0, n_env = 0, n_ready = 0;
        int r;

        if (!probe_helper_is_installed(p))
                return -ENOENT;
        env = calloc(strv_length(p->env.entries) + READY_FIELDS_MAX + 2, sizeof(char *));
        if (!env)
                return -ENOMEM;
        (void)probe_helper_find(ps, p->kind, path);
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
        /* The twins are this node's hardware, never the peer's: from the config, not the params. */
        if (p->kind->twins_option && ps->rdma_twins[0]) {
                argv[n++] = (char *)p->kind->twins_option;
                argv[n++] = ps->rdma_twins;
        }
        r = probe_kind_helper_args(p->kind, p->params, server ? PROBE_SIDE_SERVER : PROBE_SIDE_CLIENT, argv,
                                   &n, ARRAY_SIZE(argv), storage);
        if (r < 0) {
                snprintf(p->error, sizeof(p->error), "too many options for %.180s", path);
                return r;
        }
        argv[n] = NULL;
        p->helper_ops = ops;
        /* The helper's own --deadline ends it with a timeout result that names its phase; the
         * kill, a little later, is for a helper that cannot end itself. */
        limits = (struct child_limits){
                .deadline_usec = ((uint64_t)deadline + HELPER_KILL_GRACE_SEC) * 1000000ULL,
                /* A bandwidth helper keeps CPUs busy for its whole measurement: the loop (peers'
                 * heartbeats, the API) and the node's jobs come first. */
                .nice = p->kind->is_bandwidth ? ps->bandwidth_nice : 0,
        };
        r = child_spawn(ps->base, argv, env, &limits, &helper_ops, ps, &p->child);
        if (r < 0)
                snprintf(p->error, sizeof(p->error), "cannot start %.180s: %s", path, strerror(-r));
        return r;
}
