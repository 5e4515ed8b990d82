/* The API methods about the fabric: fabric (the inventory), env (the NCCL environment) and
 * doctor (the checks). Each gathers the facts afresh: sysfs reads are cheap and the answer is
 * then never older than the question. */
#include "fabric_api.h"

#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
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
        return 0;
}

static json_object *with_version(json_object *o)
{
        json_object_object_add(o, "api_version", json_object_new_int(SPARKD_API_VERSION));
        return o;
}

static bool no_params(json_object *params)
{
        return !params ||
               (json_object_is_type(params, json_type_object) && json_object_object_length(params) == 0) ||
               (json_object_is_type(params, json_type_array) && json_object_array_length(params) == 0);
}

static int method_fabric(struct api_request *req, json_object *params, void *userdata)
{
        struct fabric_facts f;
        int r;

        if (!no_params(params)) {
                api_request_reply_error(req, RPC_INVALID_PARAMS, "this method takes no parameters", NULL);
                return 0;
        }
        r = read_facts(userdata, &f);
        if (r < 0)
                return r;
        api_request_reply(req, with_version(fabric_facts_to_json(&f)));
        fabric_facts_free(&f);
        return 0;
}

static int method_env(struct api_request *req, json_object *params, void *userdata)
{
        static const char *const allowed[] = { "mode", NULL };
        const struct fabric_api_context *ctx = userdata;
        enum env_mode mode = ENV_MODE_AUTO;
        const char *mode_s = NULL, *unknown = NULL;
        struct fabric_facts f;
        json_object *o;
        int r;

        if (params && !json_object_is_type(params, json_type_object) && !no_params(params)) {
                api_request_reply_error(req, RPC_INVALID_PARAMS, "params must be an object", NULL);
                return 0;
        }
        if (params && json_object_is_type(params, json_type_object) &&
            jsonrpc_params_only(params, allowed, &unknown) < 0) {
                api_request_reply_error(req, RPC_INVALID_PARAMS, "unknown parameter; env takes \"mode\"",
                                        NULL);
                return 0;
        }
        if (jsonrpc_param_string(params && json_object_is_type(params, json_type_object) ? params : NULL,
                                 "mode", &mode_s) < 0 ||
            (mode_s && env_mode_from_string(mode_s, &mode) < 0)) {
                api_request_reply_error(req, RPC_INVALID_PARAMS,
                                        "\"mode\" must be \"auto\", \"safe\" or \"dmabuf\"", NULL);
                return 0;
        }
        /* A change not seen yet is logged first; this environment then matches the table. */
        gid_watch_check(ctx->gid_watch);
        r = read_facts(ctx, &f);
        if (r < 0)
                return r;
        gid_watch_env_served(ctx->gid_watch);
        o = with_version(envgen_build(&f, mode));
        json_object_object_add(o, "node", json_object_new_string(ctx->sources->config->node_name));
        api_request_reply(req, o);
        fabric_facts_free(&f);
        return 0;
}

static int method_doctor(struct api_request *req, json_object *params, void *userdata)
{
        struct fabric_facts f;
        int r;

        if (!no_params(params)) {
                api_request_reply_error(req, RPC_INVALID_PARAMS, "this method takes no parameters", NULL);
                return 0;
        }
        r = read_facts(userdata, &f);
        if (r < 0)
                return r;
        api_request_reply(req, with_version(doctor_run(&f)));
        fabric_facts_free(&f);
        return 0;
}

static const struct api_method fabric_methods[] = {
        { "fabric", method_fabric, false },
        { "env", method_env, false },
        { "doctor", method_doctor, false },
};

int fabric_api_register(struct api_server *api, struct fabric_api_context *context)
{
        return api_server_add_methods(api, fabric_methods, ARRAY_SIZE(fabric_methods), context);
}
