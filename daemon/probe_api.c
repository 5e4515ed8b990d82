/* The probe API methods: probe and probe-cancel (admin), history (read). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "macro.h"
#include "probe_internal.h"
#include "proto.h"

static int method_probe(struct api_request *req, json_object *params, void *userdata)
{
        static const char *const allowed[] = {
                "peer", "kind", "duration_s", "size", "streams", "count", NULL
        };
        struct probes *ps = userdata;
        struct probe_params pp = { .duration_s = 5, .streams = 1, .size = 64, .count = RTT_COUNT_DEFAULT };
        const char *peer = NULL, *kind = "rtt", *unknown = NULL;

        if (!params || !json_object_is_type(params, json_type_object) ||
            jsonrpc_params_only(params, allowed, &unknown) < 0 ||
            jsonrpc_param_string(params, "peer", &peer) <= 0 ||
            jsonrpc_param_string(params, "kind", &kind) < 0 ||
            param_uint(params, "duration_s", 1, 600, &pp.duration_s) < 0 ||
            param_uint(params, "streams", 1, 64, &pp.streams) < 0 ||
            param_uint(params, "size", 1, 65536, &pp.size) < 0 ||
            param_uint(params, "count", 1, 1000000, &pp.count) < 0) {
                api_request_reply_error(
                        req, RPC_INVALID_PARAMS,
                        "probe takes {peer, kind: rtt|tcp|rdma|nccl, duration_s 1-600, streams 1-64, "
                        "size 1-65536, count}",
                        NULL);
                return 0;
        }
        if (strcmp(kind, "rdma") == 0 || strcmp(kind, "nccl") == 0) {
                char why[160];

                snprintf(why, sizeof(why),
                         "the %s probe is not part of this build of sparkd; rtt and tcp are", kind);
                api_request_reply_error(req, RPC_INVALID_PARAMS, why, NULL);
                return 0;
        }
        if (strcmp(kind, "rtt") != 0 && strcmp(kind, "tcp") != 0) {
                api_request_reply_error(req, RPC_INVALID_PARAMS, "kind is rtt, tcp, rdma or nccl", NULL);
                return 0;
        }
        (void)probe_start(ps, kind, peer, &pp, req, false);
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
        probe_finish(p, "cancelled");
        api_request_reply(req, json_tokener_parse("{\"cancelled\":true}"));
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
            (p && param_uint(p, "limit", 0, 100000, &limit) < 0)) {
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
};

int probes_register(struct probes *ps, struct api_server *api)
{
        return api_server_add_methods(api, probe_methods, ARRAY_SIZE(probe_methods), ps);
}
