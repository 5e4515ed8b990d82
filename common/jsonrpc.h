/*
 * JSON-RPC 2.0 framing shared by daemon and client: building requests, responses, errors and
 * notifications, and checking the envelope of what arrives. One message is one JSON object
 * serialised on one line; the transport (sockets, buffers) is the caller's business.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jsonrpc_request {
        json_object *root; /* owns everything below */
        const char *method;
        json_object *params; /* NULL when absent; otherwise an object or an array */
        json_object *id;     /* NULL for a notification (no reply expected) */
        bool has_id;
};

struct jsonrpc_response {
        json_object *root;
        json_object *id;
        json_object *result; /* set on success */
        int error_code;      /* set on error */
        const char *error_message;
        json_object *error_data; /* optional */
        const char *method;      /* set when the message is a notification from the daemon */
        json_object *params;
};

/* Parses one line into a request. On failure returns a negative errno and sets *rpc_code and
 * *why to the JSON-RPC error to answer with; req->id is kept when it could be read, so the error
 * reply can name it. */
int jsonrpc_request_parse(const char *line, size_t len, struct jsonrpc_request *req, int *rpc_code,
                          const char **why);
void jsonrpc_request_done(struct jsonrpc_request *req);

/* Checks one already-parsed element of a batch. Takes a reference to obj on success. */
int jsonrpc_request_from_object(json_object *obj, struct jsonrpc_request *req, int *rpc_code,
                                const char **why);

/* Parses a line the daemon sent: a response or a notification. */
int jsonrpc_response_parse(const char *line, size_t len, struct jsonrpc_response *resp);
void jsonrpc_response_done(struct jsonrpc_response *resp);

json_object *jsonrpc_request_new(const char *method, json_object *params, int64_t id);
json_object *jsonrpc_result_new(json_object *id, json_object *result);
json_object *jsonrpc_error_new(json_object *id, int code, const char *message, json_object *data);
json_object *jsonrpc_notification_new(const char *method, json_object *params);

/* Serialises msg compactly, so it fits on one line (JSON escapes every newline inside strings).
 * The string belongs to msg; the caller adds the line's newline. */
const char *jsonrpc_to_string(json_object *msg, size_t *len);

/* Reads an optional member of a params object with its type checked; returns -EINVAL when present
 * with another type, 0 when absent (out untouched), 1 when read. */
int jsonrpc_param_string(json_object *params, const char *key, const char **out);
int jsonrpc_param_int(json_object *params, const char *key, int64_t *out);
int jsonrpc_param_bool(json_object *params, const char *key, bool *out);
/* Fails with -E2BIG naming the first member of params not listed in allowed (NULL-terminated). */
int jsonrpc_params_only(json_object *params, const char *const *allowed, const char **unknown);
