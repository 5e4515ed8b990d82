/* The API's request line (and the client's view of the daemon's lines): envelope checks and the
 * typed params readers every method handler uses. */
#include <stdlib.h>
#include <string.h>

#include "common/jsonrpc.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const char *const allowed[] = { "events", "kind", "peer", NULL };
        struct jsonrpc_request req = { 0 };
        struct jsonrpc_response resp = { 0 };
        const char *why = NULL, *s, *unknown;
        int64_t i;
        bool b;
        int code = 0;
        char *line = malloc(size ? size : 1);

        if (!line)
                return 0;
        memcpy(line, data, size);
        if (jsonrpc_request_parse(line, size, &req, &code, &why) == 0) {
                (void)jsonrpc_param_string(req.params, "peer", &s);
                (void)jsonrpc_param_int(req.params, "size", &i);
                (void)jsonrpc_param_bool(req.params, "dry_run", &b);
                (void)jsonrpc_params_only(req.params, allowed, &unknown);
                if (req.has_id) {
                        json_object *reply = jsonrpc_result_new(req.id, json_object_new_object());
                        size_t len;

                        (void)jsonrpc_to_string(reply, &len);
                        json_object_put(reply);
                }
        } else if (!why || code >= 0) {
                abort(); /* a refusal always says which JSON-RPC error to answer */
        }
        jsonrpc_request_done(&req);
        if (jsonrpc_response_parse(line, size, &resp) == 0)
                (void)jsonrpc_param_string(resp.params, "event", &s);
        jsonrpc_response_done(&resp);
        free(line);
        return 0;
}
