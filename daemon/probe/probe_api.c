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

/* The most results one history call returns. */
#define HISTORY_LIMIT_MAX 100000

static int check_kind(json_object *value, char *expected, size_t size)
{
        char names[96];

        if (probe_kind_find(json_object_get_string(value)))
                return 0;
        probe_kind_names(names, sizeof(names));
        snprintf(expected, size, "one of %s", names);
        return -EINVAL;
}

static int method_probe(struct api_request *req, json_object *params, void *userdata)
{
        struct probes *ps = userdata;
        const char *peer = NULL, *kind_name = "rtt";
        const struct probe_kind *kind;
        json_object *kind_params, *checked = NULL;
        char why[640];

        (void)jsonrpc_param_string(params, "peer", &peer);
        (void)jsonrpc_param_string(params, "kind", &kind_name);
        kind = probe_kind_find(kind_name);
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
        json_object_object_add(o, "kinds", list);
        api_request_reply(req, o);
        return 0;
}

static int method_probe_cancel(struct api_request *req, json_object *params, void *userdata)
{
        struct probes *ps = userdata;
        const char *id = NULL;
        struct probe *p;
        json_object *o;

        (void)jsonrpc_param_string(params, "id", &id);
        p = probe_find(ps, id, true);
        if (!p) {
                api_request_reply_error(req, RPC_INVALID_PARAMS, "no running probe with that id", NULL);
                return 0;
        }
        p->is_cancelled = true;
        probe_finish(p, "cancelled");
        o = json_object_new_object();
        json_object_object_add(o, "cancelled", json_object_new_boolean(true));
        api_request_reply(req, o);
        return 0;
}

static int check_history_limit(json_object *value, char *expected, size_t size)
{
        int64_t limit = json_object_get_int64(value);

        if (limit >= 0 && limit <= HISTORY_LIMIT_MAX)
                return 0;
        snprintf(expected, size, "an integer from 0 to %d", HISTORY_LIMIT_MAX);
        return -EINVAL;
}

static int method_history(struct api_request *req, json_object *params, void *userdata)
{
        struct probes *ps = userdata;
        const char *peer = NULL, *kind = NULL;
        int64_t limit = 50;
        json_object *o, *results;

        (void)jsonrpc_param_string(params, "peer", &peer);
        (void)jsonrpc_param_string(params, "kind", &kind);
        (void)jsonrpc_param_int(params, "limit", &limit);
        results = history_query_printed(ps->history, peer, kind, (size_t)limit);
        if (!results)
                return -ENOMEM;
        o = json_object_new_object();
        json_object_object_add(o, "results", results);
        api_request_reply(req, o);
        return 0;
}

static const struct api_param probe_params[] = {
        { .name = "peer", .type = API_PARAM_STRING, .is_required = true },
        { .name = "kind", .type = API_PARAM_STRING, .check = check_kind },
        {},
};

static const struct api_param probe_cancel_params[] = {
        { .name = "id", .type = API_PARAM_STRING, .is_required = true },
        {},
};

static const struct api_param history_params[] = {
        { .name = "peer", .type = API_PARAM_STRING },
        { .name = "kind", .type = API_PARAM_STRING, .check = check_kind },
        { .name = "limit", .type = API_PARAM_INTEGER, .check = check_history_limit },
        {},
};

static const struct api_method probe_methods[] = {
        { "probe", method_probe, true, probe_params, "the kind's parameters (see probe-kinds)" },
        { "probe-cancel", method_probe_cancel, true, probe_cancel_params },
        { "history", method_history, false, history_params },
        { "probe-kinds", method_probe_kinds, false },
};

int probes_register(struct probes *ps, struct api_server *api)
{
        return api_server_add_methods(api, probe_methods, ARRAY_SIZE(probe_methods), ps);
}
