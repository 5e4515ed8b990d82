/* The job methods' inputs: the plan from what this node knows of every node, and an env-check
 * request checked against its bounds. */
#include "job_api.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file_read.h"
#include "common/macro.h"
#include "doctor.h"
#include "inventory/host_path.h"
#include "job_nodes.h"

/* "ok", "warning" or "failed", and the failing checks ("gpu-direct: ..."), from a doctor result
 * (this node's: status ok/warn/fail) or a node's doctor section (verdict ok/warning/failed). */
static void doctor_verdict(json_object *doctor, struct job_node *n)
{
        json_object *v, *checks;
        const char *s = NULL;

        if (json_object_object_get_ex(doctor, "verdict", &v) ||
            json_object_object_get_ex(doctor, "status", &v))
                s = json_object_get_string(v);
        if (!s)
                return;
        /* Anything else ("unknown": the node could not run it) leaves the doctor not known. */
        if (strcmp(s, "fail") == 0 || strcmp(s, "failed") == 0)
                snprintf(n->doctor, sizeof(n->doctor), "failed");
        else if (strcmp(s, "warn") == 0 || strcmp(s, "warning") == 0)
                snprintf(n->doctor, sizeof(n->doctor), "warning");
        else if (strcmp(s, "ok") == 0)
                snprintf(n->doctor, sizeof(n->doctor), "ok");
        else
                return;
        if (strcmp(n->doctor, "failed") != 0 || !json_object_object_get_ex(doctor, "checks", &checks) ||
            !json_object_is_type(checks, json_type_array))
                return;
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i), *st, *id, *summary;
                size_t used = strlen(n->doctor_why);

                if (!json_object_object_get_ex(c, "status", &st) ||
                    (strcmp(json_object_get_string(st), "fail") != 0 &&
                     strcmp(json_object_get_string(st), "failed") != 0))
                        continue;
                json_object_object_get_ex(c, "id", &id);
                json_object_object_get_ex(c, "summary", &summary);
                snprintf(n->doctor_why + used, sizeof(n->doctor_why) - used, "%s%s: %s", used ? "; " : "",
                         id ? json_object_get_string(id) : "?",
                         summary ? json_object_get_string(summary) : "");
        }
}

json_object *job_api_plan(const struct fabric_api_context *ctx, const struct fabric_facts *f, char own[64],
                          char ifname[IF_NAMESIZE])
{
        _cleanup_(job_nodes_free) struct job_nodes nodes = { 0 };
        struct job_node self = { .is_self = true, .is_up = true };
        json_object *doctor = doctor_run(f);

        own[0] = ifname[0] = '\0';
        (void)job_own_address(f, own, 64, ifname, IF_NAMESIZE);
        snprintf(self.node_id, sizeof(self.node_id), "%s", ctx->node_id ? ctx->node_id : "");
        snprintf(self.name, sizeof(self.name), "%s", ctx->sources->config->node_name);
        snprintf(self.address, sizeof(self.address), "%s", own);
        doctor_verdict(doctor, &self);
        json_object_put(doctor);
        if (job_nodes_add(&nodes, &self) < 0 || job_nodes_add_peers(&nodes, f->peers) < 0)
                return NULL;
        for (size_t i = 1; i < nodes.n && ctx->node_doctor; i++) {
                json_object *section = ctx->node_doctor(nodes.v[i].node_id, &nodes.v[i].is_doctor_stale,
                                                        ctx->node_doctor_userdata);

                if (section)
                        doctor_verdict(section, &nodes.v[i]);
                json_object_put(section);
        }
        for (size_t i = 0; i < nodes.n && ctx->name_is_shared; i++)
                nodes.v[i].is_name_shared =
                        ctx->name_is_shared(nodes.v[i].name, ctx->name_is_shared_userdata);
        return job_plan_build(&nodes, ctx->sources->config->cluster_head);
}

/* Writes the refusal into why and gives -EINVAL. */
#define REFUSE(...) (snprintf(why, size, __VA_ARGS__), -EINVAL)

static int read_environ(json_object *environ, struct env_check_input *in, char *why, size_t size)
{
        int r;

        if (json_object_object_length(environ) > ENV_CHECK_MAX_VARIABLES)
                return REFUSE("env-check: \"environ\" has more than %d variables", ENV_CHECK_MAX_VARIABLES);
        json_object_object_foreach(environ, name, value) {
                const char *v;

                if (!json_object_is_type(value, json_type_string))
                        return REFUSE("env-check: \"environ\": %.64s must be a string", name);
                v = json_object_get_string(value);
                if (strlen(name) > ENV_CHECK_MAX_NAME || strlen(v) > ENV_CHECK_MAX_VALUE)
                        return REFUSE(
                                "env-check: \"environ\": %.64s: a name has at most %d bytes, a value %d",
                                name, ENV_CHECK_MAX_NAME, ENV_CHECK_MAX_VALUE);
                if (!env_check_is_relevant(name))
                        continue;
                if ((r = env_settings_add(&in->environ, name, v, "environment")) < 0)
                        return r;
        }
        return 0;
}

/* Bytes, or -1 for unlimited (RLIM_INFINITY). */
static int read_limit(json_object *memlock, const char *key, uint64_t *out, char *why, size_t size)
{
        json_object *v;
        int64_t n;

        if (!json_object_object_get_ex(memlock, key, &v) || !json_object_is_type(v, json_type_int))
                return REFUSE("env-check: \"memlock\" needs \"%s\": bytes, or -1 for unlimited", key);
        n = json_object_get_int64(v);
        if (n < -1)
                return REFUSE("env-check: \"memlock\".%s is %lld; expected bytes, or -1 for unlimited", key,
                              (long long)n);
        *out = n == -1 ? HOSTFACTS_UNLIMITED : (uint64_t)n;
        return 0;
}

/*
 * The caller's own NCCL config file comes as text in the request: the client read it with the
 * caller's permissions, as NCCL in its job will. The daemon never opens a path a caller names
 * or owns (a symlink in a home directory would let it read any file as root).
 */
static int read_user_conf(json_object *conf, struct env_check_input *in, char *why, size_t size)
{
        json_object *path, *text;
        int r;

        if (!json_object_object_get_ex(conf, "path", &path) ||
            !json_object_is_type(path, json_type_string) ||
            !json_object_object_get_ex(conf, "text", &text) || !json_object_is_type(text, json_type_string))
                return REFUSE("env-check: \"nccl_conf\" needs \"path\" and \"text\", both strings");
        if (json_object_get_string_len(text) > ENV_CHECK_MAX_FILE_BYTES ||
            json_object_get_string_len(path) > 256)
                return REFUSE("env-check: \"nccl_conf\": the text has at most %d bytes, the path 256",
                              ENV_CHECK_MAX_FILE_BYTES);
        r = env_check_parse_conf(json_object_get_string(text), json_object_get_string(path), &in->files);
        if (r == -E2BIG)
                return REFUSE("env-check: \"nccl_conf\".text has more than %d lines",
                              ENV_CHECK_MAX_FILE_LINES);
        return r;
}

/* /etc/nccl.conf, read here under the host root: a missing or unreadable file sets nothing, as
 * for NCCL. */
static int read_system_conf(const struct fabric_api_context *ctx, struct env_check_input *in)
{
        _cleanup_free_ char *text = NULL;
        char path[PATH_MAX], why[256];
        size_t len;
        int r;

        if (host_path(path, sizeof(path), ctx->sources->config->host_root, "etc/nccl.conf") < 0)
                return 0;
        if (file_read_regular(AT_FDCWD, path, 0, ENV_CHECK_MAX_FILE_BYTES, &text, &len, why, sizeof(why)) <
            0)
                return 0;
        r = env_check_parse_conf(text, "/etc/nccl.conf", &in->files);
        return r == -E2BIG ? 0 : r;
}

int job_api_env_check_input(const struct fabric_api_context *ctx, json_object *params,
                            struct env_check_input *in, char *why, size_t size)
{
        json_object *environ, *memlock, *conf;
        int r;

        if (params && json_object_object_get_ex(params, "environ", &environ) &&
            (r = read_environ(environ, in, why, size)) < 0)
                return r;
        if (params && json_object_object_get_ex(params, "memlock", &memlock)) {
                if ((r = read_limit(memlock, "soft", &in->memlock_soft, why, size)) < 0 ||
                    (r = read_limit(memlock, "hard", &in->memlock_hard, why, size)) < 0)
                        return r;
                in->has_memlock = true;
        }
        if (params && json_object_object_get_ex(params, "nccl_conf", &conf) &&
            (r = read_user_conf(conf, in, why, size)) < 0)
                return r;
        return read_system_conf(ctx, in);
}
