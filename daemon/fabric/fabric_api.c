/* The API methods about the fabric: fabric (the inventory), env (the NCCL environment, and a
 * framework's on top), doctor (the checks), job-nodes (the nodes a job starts on) and env-check (a
 * job's environment judged). Each gathers the facts afresh: the answer is then never older than
 * the question. The doctor's result is also kept (doctor_keep.h) for the readers that call often
 * and may be a little behind: status, metrics, the cluster sections. */
#include "fabric_api.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
#include "daemon/base/log.h"
#include "doctor.h"
#include "env_check.h"
#include "envgen.h"
#include "envgen_frameworks.h"
#include "inventory/fabric.h"
#include "job_api.h"
#include "netplan_write.h"

/* Each name clash gets "head": whether [cluster] head (NULL: none) is that name. */
static void mark_head(json_object *clashes, const char *head)
{
        for (size_t i = 0; clashes && i < json_object_array_length(clashes); i++) {
                json_object *clash = json_object_array_get_idx(clashes, i);
                const char *name = json_object_get_string(json_object_object_get(clash, "name"));

                json_object_object_add(clash, "head",
                                       json_object_new_boolean(head && name && strcmp(name, head) == 0));
        }
}

static int read_facts(const struct fabric_api_context *ctx, struct fabric_facts *f)
{
        int r = fabric_sources_gather(ctx->sources, f);

        if (r < 0)
                return r;
        f->peers = ctx->peers ? ctx->peers(ctx->peers_userdata) : NULL;
        f->rail_verdicts = ctx->rail_verdicts ? ctx->rail_verdicts(ctx->rail_verdicts_userdata) : NULL;
        f->software_nodes = ctx->software_nodes ? ctx->software_nodes(ctx->software_nodes_userdata) : NULL;
        f->firewall = ctx->firewall ? ctx->firewall(ctx->firewall_userdata) : NULL;
        f->lldpd_status = ctx->lldpd_status ? ctx->lldpd_status(ctx->lldpd_status_userdata) : NULL;
        f->topology = ctx->topology ? ctx->topology(ctx->topology_userdata) : NULL;
        f->name_clashes = ctx->name_clashes ? ctx->name_clashes(ctx->name_clashes_userdata) : NULL;
        mark_head(f->name_clashes, ctx->sources->config->cluster_head);
        snprintf(f->self_id, sizeof(f->self_id), "%s", ctx->node_id ? ctx->node_id : "");
        return 0;
}

static int method_fabric(struct api_request *req, json_object *params, void *userdata)
{
        struct fabric_facts f;
        int r;

        r = read_facts(userdata, &f);
        if (r < 0)
                return r;
        api_request_reply(req, fabric_facts_to_json(&f));
        fabric_facts_free(&f);
        return 0;
}

static int check_env_mode(json_object *value, char *expected, size_t size)
{
        enum env_mode mode;

        if (env_mode_from_string(json_object_get_string(value), &mode) == 0)
                return 0;
        snprintf(expected, size, "one of %s, %s, %s", env_mode_to_string(ENV_MODE_AUTO),
                 env_mode_to_string(ENV_MODE_SAFE), env_mode_to_string(ENV_MODE_DMABUF));
        return -EINVAL;
}

static int check_framework(json_object *value, char *expected, size_t size)
{
        enum env_framework framework;

        if (env_framework_from_string(json_object_get_string(value), &framework) == 0)
                return 0;
        snprintf(expected, size, "one of %s", env_framework_names());
        return -EINVAL;
}

/* A framework's variables on top of the environment; when they cannot be given, the result
 * says why ("for_refused") and keeps the rest. */
static void add_framework(const struct fabric_api_context *ctx, const struct fabric_facts *f,
                          json_object *env, const char *name)
{
        enum env_framework framework;
        json_object *plan, *found;

        if (env_framework_from_string(name, &framework) < 0 ||
            !json_object_object_get_ex(env, "fabric_found", &found) || !json_object_get_boolean(found))
                return;
        plan = job_api_plan(ctx, f);
        if (!plan) {
                json_object_object_add(env, "for_refused", json_object_new_string("out of memory"));
                return;
        }
        (void)envgen_add_framework(env, framework, plan);
        json_object_put(plan);
}

/* Without a framework, the plan's digest and plane still shape the environment. */
static void add_plan(const struct fabric_api_context *ctx, const struct fabric_facts *f, json_object *env)
{
        json_object *plan, *found;

        if (!json_object_object_get_ex(env, "fabric_found", &found) || !json_object_get_boolean(found))
                return;
        plan = job_api_plan(ctx, f);
        if (plan)
                envgen_apply_plan(env, plan, true);
        json_object_put(plan);
}

/* env's answer from facts read now: envgen's, and a framework's (NULL: the plan's shape alone). */
static json_object *env_of(const struct fabric_api_context *ctx, const struct fabric_facts *f,
                           enum env_mode mode, const char *framework)
{
        json_object *o = envgen_build(f, mode);

        json_object_object_add(o, "node", json_object_new_string(ctx->sources->config->node_name));
        if (framework)
                add_framework(ctx, f, o, framework);
        else
                add_plan(ctx, f, o);
        return o;
}

static int method_env(struct api_request *req, json_object *params, void *userdata)
{
        const struct fabric_api_context *ctx = userdata;
        enum env_mode mode = ENV_MODE_AUTO;
        const char *mode_s = NULL, *framework = NULL;
        struct fabric_facts f;
        int r;

        if (jsonrpc_param_string(params, "mode", &mode_s) > 0)
                (void)env_mode_from_string(mode_s, &mode);
        (void)jsonrpc_param_string(params, "for", &framework);
        /* A change not seen yet is logged first; this environment then matches the table. */
        gid_watch_check(ctx->gid_watch);
        r = read_facts(ctx, &f);
        if (r < 0)
                return r;
        gid_watch_env_served(ctx->gid_watch);
        api_request_reply(req, env_of(ctx, &f, mode, framework));
        fabric_facts_free(&f);
        return 0;
}

int fabric_api_job_files_input(const struct fabric_api_context *ctx, json_object **plan, json_object **env,
                               json_object **map)
{
        struct fabric_facts f;
        int r;

        /* Not an environment served to a job: the GID watch's warning that jobs started before a
         * change may fail stays until a job asks again. */
        gid_watch_check(ctx->gid_watch);
        r = read_facts(ctx, &f);
        if (r < 0)
                return r;
        *plan = job_api_plan(ctx, &f);
        *env = env_of(ctx, &f, ENV_MODE_AUTO, "torchrun");
        *map = json_object_get(f.topology);
        fabric_facts_free(&f);
        if (!*plan || !*env) {
                json_object_put(*plan);
                json_object_put(*env);
                json_object_put(*map);
                return -ENOMEM;
        }
        return 0;
}

json_object *fabric_api_job_env(const struct fabric_api_context *ctx, const char *framework,
                                json_object **plan)
{
        struct fabric_facts f;
        json_object *o;

        *plan = NULL;
        if (read_facts(ctx, &f) < 0)
                return NULL;
        /* The same answer `env --for FRAMEWORK` gives, so a probe runs with what a job gets. */
        o = env_of(ctx, &f, ENV_MODE_AUTO, framework);
        if (o)
                json_object_object_add(o, "unified_memory",
                                       json_object_new_boolean(f.host.has_unified_memory));
        *plan = job_api_plan(ctx, &f);
        fabric_facts_free(&f);
        return o;
}

int fabric_api_doctor_run(void *context, json_object **out)
{
        struct fabric_facts f;
        int r;

        r = read_facts(context, &f);
        if (r < 0)
                return r;
        *out = doctor_run(&f);
        fabric_facts_free(&f);
        return 0;
}

int fabric_api_doctor(const struct fabric_api_context *ctx, json_object **out)
{
        int r = fabric_api_doctor_run((void *)ctx, out);

        if (r == 0)
                doctor_keep_put(ctx->keep, *out);
        return r;
}

json_object *fabric_api_doctor_kept(const struct fabric_api_context *ctx)
{
        json_object *doctor = NULL;

        if (ctx->keep)
                return json_object_get(doctor_keep_get(ctx->keep));
        return fabric_api_doctor_run((void *)ctx, &doctor) == 0 ? doctor : NULL;
}

int fabric_api_node_sections(const struct fabric_api_context *ctx, json_object **doctor,
                             json_object **addresses)
{
        struct mgmt_address management;
        struct fabric_facts f;
        int r;

        r = read_facts(ctx, &f);
        if (r < 0)
                return r;
        if (mgmt_address_read("/proc/net/route", &management) < 0)
                management = (struct mgmt_address){ 0 };
        *doctor = doctor_run(&f);
        doctor_keep_put(ctx->keep, *doctor);
        *addresses = job_api_addresses(&f, &management);
        fabric_facts_free(&f);
        return 0;
}

static int method_doctor(struct api_request *req, json_object *params, void *userdata)
{
        json_object *o;
        int r;

        r = fabric_api_doctor(userdata, &o);
        if (r < 0)
                return r;
        api_request_reply(req, o);
        return 0;
}

/* Plans this node's netplan file from the map's address plan, leaving out the netdevs that must
 * keep their addresses; sparkc, run as root, writes it (netplan_write.h). */
static int method_topology_netplan_write(struct api_request *req, json_object *params, void *userdata)
{
        const struct fabric_api_context *ctx = userdata;
        const struct sparkd_config *config = ctx->sources->config;
        _cleanup_free_ char *path = NULL;
        json_object *result = NULL;
        struct fabric_facts f;
        char why[640];
        int r;

        r = read_facts(ctx, &f);
        if (r < 0)
                return r;
        if (!f.topology) {
                fabric_facts_free(&f);
                api_request_reply_error(
                        req, RPC_INTERNAL_ERROR,
                        "topology-netplan-write: the cluster's topology is not known here yet (no "
                        "neighbour tables): nothing to write",
                        NULL);
                return 0;
        }
        if (asprintf(&path, "%s/netplan/60-sparkd-fabric.yaml", config->etc_root) < 0) {
                fabric_facts_free(&f);
                return -ENOMEM;
        }
        r = netplan_write_plan(f.topology, ctx->node_id, &f, path, &result, why, sizeof(why));
        fabric_facts_free(&f);
        if (r < 0) {
                char message[700];

                log_error("topology-netplan-write: %s", why);
                snprintf(message, sizeof(message), "topology-netplan-write: %s", why);
                api_request_reply_error(req, RPC_INTERNAL_ERROR, message, NULL);
                return 0;
        }
        log_info("topology-netplan-write: %s planned with %zu netdevs, %zu refused", path,
                 json_object_array_length(json_object_object_get(result, "netdevs")),
                 json_object_array_length(json_object_object_get(result, "refused")));
        api_request_reply(req, result);
        return 0;
}

static int method_job_nodes(struct api_request *req, json_object *params, void *userdata)
{
        struct fabric_facts f;
        json_object *plan;
        int r;

        r = read_facts(userdata, &f);
        if (r < 0)
                return r;
        plan = job_api_plan(userdata, &f);
        fabric_facts_free(&f);
        if (!plan)
                return -ENOMEM;
        api_request_reply(req, plan);
        return 0;
}

/* Read-only: it judges what the caller sends and opens no file the caller names. */
static int method_env_check(struct api_request *req, json_object *params, void *userdata)
{
        struct env_check_input in = { 0 };
        struct fabric_facts f;
        char why[512];
        int r;

        r = job_api_env_check_input(userdata, params, &in, why, sizeof(why));
        if (r == -EINVAL) {
                api_request_reply_error(req, RPC_INVALID_PARAMS, why, NULL);
                r = 0;
        } else if (r == 0 && (r = read_facts(userdata, &f)) == 0) {
                json_object *plan = job_api_plan(userdata, &f), *self, *head, *v;

                /* The plan's addresses, for the fixes and the rendezvous check. */
                if (plan && json_object_object_get_ex(plan, "self", &self) && self &&
                    json_object_object_get_ex(self, "address", &v))
                        snprintf(in.own_address, sizeof(in.own_address), "%s", json_object_get_string(v));
                if (plan && json_object_object_get_ex(plan, "head", &head) && head &&
                    json_object_object_get_ex(head, "address", &v))
                        snprintf(in.rendezvous, sizeof(in.rendezvous), "%s", json_object_get_string(v));
                if (plan && envgen_plan_bootstrap_ifname(plan))
                        snprintf(in.bootstrap_ifname, sizeof(in.bootstrap_ifname), "%s",
                                 envgen_plan_bootstrap_ifname(plan));
                json_object_put(plan);
                api_request_reply(req, env_check_run(&f, &in));
                fabric_facts_free(&f);
        }
        env_settings_free(&in.environ);
        env_settings_free(&in.files);
        return r;
}

static const struct api_param env_params[] = {
        { .name = "mode", .type = API_PARAM_STRING, .check = check_env_mode },
        { .name = "for", .type = API_PARAM_STRING, .check = check_framework },
        {},
};

static const struct api_param env_check_params[] = {
        { .name = "environ", .type = API_PARAM_OBJECT },
        { .name = "memlock", .type = API_PARAM_OBJECT },
        { .name = "nccl_conf", .type = API_PARAM_OBJECT },
        {},
};

static const struct api_method fabric_methods[] = {
        { "fabric", method_fabric, false },
        { "env", method_env, false, env_params },
        { "doctor", method_doctor, false },
        { "topology-netplan-write", method_topology_netplan_write, true },
        { "job-nodes", method_job_nodes, false },
        { "env-check", method_env_check, false, env_check_params },
};

int fabric_api_register(struct api_server *api, struct fabric_api_context *context)
{
        return api_server_add_methods(api, fabric_methods, ARRAY_SIZE(fabric_methods), context);
}
