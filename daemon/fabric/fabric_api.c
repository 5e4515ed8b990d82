/* The API methods about the fabric: fabric (the inventory), env (the NCCL environment) and
 * doctor (the checks). Each gathers the facts afresh: sysfs reads are cheap and the answer is
 * then never older than the question. */
#include "fabric_api.h"

#include <errno.h>
#include <stdio.h>

#include "common/jsonrpc.h"
#include "common/macro.h"
#include "doctor.h"
#include "envgen.h"
#include "inventory/fabric.h"

static int read_facts(const struct fabric_api_context *ctx, struct fabric_facts *f)
{
        int r = fabric_sources_gather(ctx->sources, f);

        if (r < 0)
                return r;
        f->peers = ctx->peers ? ctx->peers(ctx->peers_userdata) : NULL;
        f->rail_verdicts = ctx->rail_verdicts ? ctx->rail_verdicts(ctx->rail_verdicts_userdata) : NULL;
        f->lldpd_status = ctx->lldpd_status ? ctx->lldpd_status(ctx->lldpd_status_userdata) : NULL;
        f->topology = ctx->topology ? ctx->topology(ctx->topology_userdata) : NULL;
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

static int method_env(struct api_request *req, json_object *params, void *userdata)
{
        const struct fabric_api_context *ctx = userdata;
        enum env_mode mode = ENV_MODE_AUTO;
        const char *mode_s = NULL;
        struct fabric_facts f;
        json_object *o;
        int r;

        if (jsonrpc_param_string(params, "mode", &mode_s) > 0)
                (void)env_mode_from_string(mode_s, &mode);
        /* A change not seen yet is logged first; this environment then matches the table. */
        gid_watch_check(ctx->gid_watch);
        r = read_facts(ctx, &f);
        if (r < 0)
                return r;
        gid_watch_env_served(ctx->gid_watch);
        o = envgen_build(&f, mode);
        json_object_object_add(o, "node", json_object_new_string(ctx->sources->config->node_name));
        api_request_reply(req, o);
        fabric_facts_free(&f);
        return 0;
}

int fabric_api_doctor(const struct fabric_api_context *ctx, json_object **out)
{
        struct fabric_facts f;
        int r;

        r = read_facts(ctx, &f);
        if (r < 0)
                return r;
        *out = doctor_run(&f);
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

static const struct api_param env_params[] = {
        { .name = "mode", .type = API_PARAM_STRING, .check = check_env_mode },
        {},
};

static const struct api_method fabric_methods[] = {
        { "fabric", method_fabric, false },
        { "env", method_env, false, env_params },
        { "doctor", method_doctor, false },
};

int fabric_api_register(struct api_server *api, struct fabric_api_context *context)
{
        return api_server_add_methods(api, fabric_methods, ARRAY_SIZE(fabric_methods), context);
}
