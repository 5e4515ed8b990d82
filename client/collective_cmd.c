/* sparkc probe --kind nccl --all | --nodes A,B,C: the collective NCCL probe across the job plan's
 * nodes, coordinated by this node's sparkd (probe-collective). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "collective_table.h"
#include "commands.h"
#include "common/jsonrpc.h"
#include "exit_status.h"
#include "rpc.h"

int probe_collective(const struct client_options *o, const char *nodes, json_object *given)
{
        struct client_options slow = *o;
        struct jsonrpc_response resp;
        json_object *params = json_object_new_object(), *list;
        const char *status;
        int r, rc;

        json_object_object_foreach(given, key, value)
                json_object_object_add(params, key, json_object_get(value));
        json_object_object_add(params, "kind", json_object_new_string("nccl"));
        if (nodes) {
                char *copy = strdup(nodes), *save = NULL;

                list = json_object_new_array();
                for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
                        json_object_array_add(list, json_object_new_string(t));
                free(copy);
                json_object_object_add(params, "nodes", list);
        }
        /* The daemon's deadlines per stage end it; this guards only against one that never answers. */
        slow.timeout_ms = o->timeout_ms + 4 * 3600 * 1000;
        r = client_call(&slow, "probe-collective", params, &resp);
        if (r < 0)
                return PROBE_EXIT_FAILED;
        if (o->json)
                client_print_json(resp.result);
        else
                collective_table_print(stdout, resp.result);
        status = client_get_string(resp.result, "status", "failed");
        rc = strcmp(status, "ok") == 0         ? PROBE_EXIT_OK
             : strcmp(status, "degraded") == 0 ? PROBE_EXIT_DEGRADED
                                               : PROBE_EXIT_FAILED;
        jsonrpc_response_done(&resp);
        return rc;
}
