/* sparkc's side of the control API: connect to the daemon's socket, send one request, read its
 * answer (and, for watch, the notifications after it), each wait bounded by a timeout. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/jsonrpc.h"

struct rpc_client;

/* Fails with a negative errno; the caller says which socket could not be reached. */
int rpc_connect(const char *path, int timeout_ms, struct rpc_client **ret);
void rpc_close(struct rpc_client *c);
/* Whom the socket at path lets in, from its owner, group and mode (sparkd sets the group and mode
 * from socket_group and socket_mode): "root and the group G", or "root only". For telling a
 * refused user why; fails with a negative errno when the socket cannot be looked at. */
int rpc_socket_audience(const char *path, char *buf, size_t size);

/* Sends method(params) (params taken over, may be NULL) and waits for its response. */
int rpc_call(struct rpc_client *c, const char *method, json_object *params, struct jsonrpc_response *resp);

/* Like rpc_call, with notifications that arrive before the answer handed to on_notify. */
int rpc_call_notify(struct rpc_client *c, const char *method, json_object *params,
                    struct jsonrpc_response *resp,
                    void (*on_notify)(const char *method, json_object *params, void *userdata),
                    void *userdata);

/* Waits for the next message (-1 timeout_ms waits forever); -ECONNRESET when the daemon closed. */
int rpc_read_message(struct rpc_client *c, int timeout_ms, struct jsonrpc_response *resp);
