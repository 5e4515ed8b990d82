/* What sparkc's command files share: the global options and small helpers around the API. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "common/jsonrpc.h"

struct client_options {
        const char *socket_path;
        bool json;
        int timeout_ms;
};

/* Calls one method and reports failures on stderr; returns 0 with resp filled, or minus the
 * exit code to use (1 the daemon answered with an error, 2 it could not be reached). */
int client_call(const struct client_options *o, const char *method, json_object *params,
                struct jsonrpc_response *resp);
const char *client_get_string(json_object *obj, const char *key, const char *fallback);
void client_print_json(json_object *obj);

int cmd_probe(const struct client_options *o, int argc, char **argv);
int cmd_history(const struct client_options *o, int argc, char **argv);
int cmd_probe_kinds(const struct client_options *o, int argc, char **argv);
