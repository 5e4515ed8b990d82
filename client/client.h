/*
 * What sparkc's command files share: the global options, the exit codes (exit_status.h), calling the daemon
 * (with what went wrong said on stderr) and reading fields of its results.
 */
#pragma once

#include <json-c/json.h>
#include <signal.h>
#include <stdbool.h>

#include "common/jsonrpc.h"
#include "exit_status.h"

struct client_options {
        const char *socket_path;
        bool json;
        int timeout_ms;
};

struct rpc_client;

/* Set by sparkc's SIGINT and SIGTERM handler: a command that loops ends at its next look. */
extern volatile sig_atomic_t client_interrupted;

/* Connects to the daemon's socket; returns 0, or -EXIT_UNREACHABLE after saying why not. */
int client_connect(const struct client_options *o, struct rpc_client **c);
/* Calls one method and reports failures on stderr; returns 0 with resp filled, or minus the
 * exit code to use (1 the daemon answered with an error, 2 it could not be reached). With keep,
 * the connection stays open there for what follows the answer. */
int client_call_keep(const struct client_options *o, const char *method, json_object *params,
                     struct jsonrpc_response *resp, struct rpc_client **keep);
int client_call(const struct client_options *o, const char *method, json_object *params,
                struct jsonrpc_response *resp);

/* Fields of a result; missing ones read as the fallback, false, 0. */
const char *client_get_string(json_object *obj, const char *key, const char *fallback);
bool client_get_bool(json_object *obj, const char *key);
double client_get_double(json_object *obj, const char *key);
int client_get_int(json_object *obj, const char *key);
void client_print_json(json_object *obj);

/* -EINVAL, after saying so, when a command that takes no arguments got some. */
int client_no_args(const char *name, int argc);

/*
 * A command that takes no arguments and shows what the method of its name (argv[0]) returns: as
 * JSON with --json, else through show. Returns the exit status.
 */
int client_show(const struct client_options *o, int argc, char **argv, void (*show)(json_object *result));
