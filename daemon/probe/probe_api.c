/* The probe API methods: probe and probe-cancel (admin), history and probe-kinds (read). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
#include "probe_exchange.h"
#include "probe_helper.h"
#include "probe_queue.h"
#include "probe_table.h"

static int method_probe(struct api_request *req, json_object *params, void *userdata)
{
        struct probes *ps = userdata;
        const char *peer = NULL, *kind_name = "rtt";
        const struct probe_kind *kind;
        json_object *kind_params, *checked = NULL;
        char why[640], names[96];

        probe_kind_names(names, sizeof(names));
        if (!params || !json_object_is_type(params, json_type_object) ||
            jsonrpc_param_string(params, "peer", &peer) <= 0 ||
            jsonrpc_param_string(params, "kind", &kind_name) < 0) {
                snprintf(why, sizeof(why),
                         "probe takes {peer, kind (%s), and the kind's parameters (see probe-kinds)}",
                         names);
                api_request_reply_error(req, RPC_INVALID_PARAMS, why, NULL);
                return 0;
        }
        kind = probe_kind_find(kind_name);
        if (!kind) {
                snprintf(why, sizeof(why), "no %.40s probe: kind is one of %s", kind_name, names);
                api_request_reply_error(req, RPC_INVALID_PARAMS, why, NULL);
                return 0;
        }
        kind_params = json_object_new_object();
        json_object_object_foreach(params, key, value) {
                if (strcmp(key, "peer") != 0 && strcmp(key, "kind") != 0)
                        json_object_object_add(kind_params, key, json_object_get(value));
        }
        if (probe_kind_params(kind, kind_params, &checked, why, sizeof(why)) < 0) {
                json_object_put(kind_params);
                api_request_reply_error(req, RPC_INVALID_PARAMS, why, NULL);
                return 0;
        }
        json_object_put(kind_params);
        (void)probe_start(ps, kind, peer, checked, req, false);
        return 0;
}

static json_object *kind_to_json(struct probes *ps, const struct probe_kind *k)
{
        json_object *o = json_object_new_object(), *list = json_object_new_array();
        char path[PROBE_HELPER_PATH_MAX];
        bool installed = probe_helper_find(ps, k, path);

        json_object_object_add(o, "name", json_object_new_string(k->name));
        json_object_object_add(o, "summary", json_object_new_string(k->summary));
        json_object_object_add(o, "bandwidth", json_object_new_boolean(k->is_bandwidth));
        json_object_object_add(o, "metric", json_object_new_string(k->metric));
        json_object_object_add(o, "unit", json_object_new_string(k->unit));
        json_object_object_add(o, "helper", json_object_new_string(path));
        json_object_object_add(o, "installed", json_object_new_boolean(installed));
        for (const struct probe_param_spec *s = k->params; s->name; s++)
                json_object_array_add(list, probe_param_to_json(s));
        json_object_object_add(o, "params", list);
        return o;
}

static int method_probe_kinds(struct api_request *req, json_object *params, void *userdata)
{
        struct probes *ps = userdata;
        json_object *o = json_object_new_object(), *list = json_object_new_array();

        for (size_t i = 0; probe_kind_at(i); i++)
                json_object_array_add(list, kind_to_json(ps, probe_kind_at(i)));
        json_object_object_add(o, "api_version", json_object_new_int(SPARKD_API_VERSION));
        json_object_object_add(o, "kinds", list);
        api_request_reply(req, o);
        return 0;
}

static int method_probe_cancel(struct api_request *req, json_object *params, void *userdata)
{
        struct probes *ps = userdata;
        const char *id = NULL;
        struct probe *p;

        if (jsonrpc_param_string(params && json_object_is_type(params, json_type_object) ? params : NULL,
                                 "id", &id) <= 0) {
                api_request_reply_error(req, RPC_INVALID_PARAMS, "probe-cancel takes {id}", NULL);
                return 0;
        }
        p = probe_find(ps, id, true);
        if (!p) {
                api_request_reply_error(req, RPC_INVALID_PARAMS, "no running probe with that id", NULL);
                return 0;
        }
        p->is_cancelled = true;
        probe_finish(p, "cancelled");
        api_request_reply(req, json_tokener_parse("{\"cancelled\":true}"));
        return 0;
}

static int history_limit_param(json_object *params, unsigned *limit)
{
        json_object *v;

        if (!json_object_object_get_ex(params, "limit", &v))
                return 0;
        if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
            json_object_get_int64(v) > 100000)
                return -EINVAL;
        *limit = (unsigned)json_object_get_int64(v);
        return 0;
}

static int method_history(struct api_request *req, json_object *params, void *userdata)
{
        static const char *const allowed[] = { "peer", "kind", "limit", NULL };
        struct probes *ps = userdata;
        const char *peer = NULL, *kind = NULL, *unknown = NULL;
        unsigned limit = 50;
        json_object *o, *p = params && json_object_is_type(params, json_type_object) ? params : NULL;

        if ((p && jsonrpc_params_only(p, allowed, &unknown) < 0) ||
            jsonrpc_param_string(p, "peer", &peer) < 0 || jsonrpc_param_string(p, "kind", &kind) < 0 ||
            (p && history_limit_param(p, &limit) < 0)) {
                api_request_reply_error(req, RPC_INVALID_PARAMS, "history takes {peer, kind, limit}", NULL);
                return 0;
        }
        o = json_object_new_object();
        json_object_object_add(o, "api_version", json_object_new_int(SPARKD_API_VERSION));
        json_object_object_add(o, "results", history_query(ps->history, peer, kind, limit));
        api_request_reply(req, o);
        return 0;
}

static const struct api_method probe_methods[] = {
        { "probe", method_probe, true },
        { "probe-cancel", method_probe_cancel, true },
        { "history", method_history, false },
        { "probe-kinds", method_probe_kinds, false },
};

int probes_register(struct probes *ps, struct api_server *api)
{
        return api_server_add_methods(api, probe_methods, ARRAY_SIZE(probe_methods), ps);
}
