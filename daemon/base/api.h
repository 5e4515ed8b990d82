/*
 * The control API server: JSON-RPC 2.0 over a UNIX stream socket, one JSON object per line.
 * It owns the listening socket, the client connections, access checks (SO_PEERCRED), the
 * request size limit and the event stream of subscribed clients. Modules register methods; a
 * method replies at once or later (api_request_reply* may be called after the handler returned).
 * Each method declares its params; requests that do not fit are refused here, in one format.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct api_server;
struct api_request;

/* Return 0 when the request was or will be answered, or a negative errno to answer with an
 * internal error. params has passed the method's declaration: NULL when the request had none (or
 * an empty array), otherwise an object. */
typedef int (*api_method_fn)(struct api_request *req, json_object *params, void *userdata);

enum api_param_type {
        API_PARAM_STRING,
        API_PARAM_INTEGER,
        API_PARAM_BOOLEAN,
        API_PARAM_ARRAY,
        API_PARAM_OBJECT,
};

/* One member a method's params object may have. */
struct api_param {
        const char *name;
        enum api_param_type type;
        bool is_required;
        const char *const *choices; /* strings: the values allowed, NULL-terminated; NULL: any */
        /* Judges a value of the right type: 0, or -EINVAL with what was expected written to expected
         * ("an integer from 0 to 100000"). NULL: the type is enough. */
        int (*check)(json_object *value, char *expected, size_t size);
};

struct api_method {
        const char *name;
        api_method_fn fn;
        bool needs_admin; /* changes state: uid 0 or the admin group only */
        /* The members params may have, ending with a NULL name; NULL: the method takes none. The
         * server refuses a request that does not fit before the method sees it. */
        const struct api_param *params;
        /* Members not declared are passed on for the method to judge when this says what they are
         * (in messages: "the kind's parameters"); NULL: they are refused. */
        const char *other_params;
};

struct api_access {
        mode_t socket_mode;
        bool has_socket_gid;
        gid_t socket_gid;
        bool has_admin_gid;
        gid_t admin_gid;
        unsigned max_clients;
        unsigned reserved_admin_clients; /* of max_clients, kept for root and the admin group */
        unsigned max_clients_per_uid;    /* for each uid outside the admin group */
};

/* listen_fd >= 0: a listening socket handed over by systemd, used as it is and never unlinked.
 * Otherwise path is bound here; a stale socket file is replaced, a live one is -EADDRINUSE. */
int api_server_new(struct event_base *base, const char *path, int listen_fd, const struct api_access *access,
                   struct api_server **ret);
void api_server_free(struct api_server *server);
const char *api_server_path(const struct api_server *server);
bool api_server_is_activated(const struct api_server *server);
/* Applies new access settings; existing connections keep the admin right they were given. */
int api_server_set_access(struct api_server *server, const struct api_access *access);

/* The table must stay valid while the server lives. */
int api_server_add_methods(struct api_server *server, const struct api_method *methods, size_t n,
                           void *userdata);

/* Sends an event notification to every subscriber that asked for its type. */
void api_server_publish(struct api_server *server, json_object *event);

/* Answering: each takes ownership of result/data and frees req. The server adds "api_version"
 * to a result object (NULL is an empty one); methods never do. */
void api_request_reply(struct api_request *req, json_object *result);
void api_request_reply_error(struct api_request *req, int code, const char *message, json_object *data);

/* Sends a notification on the request's connection before its answer (progress of a long
 * method); params taken over. Does nothing when the client has gone. */
void api_request_notify(struct api_request *req, const char *method, json_object *params);
/* Has the client of this request gone away (the answer would be lost)? */
bool api_request_is_orphan(const struct api_request *req);
/* Calls fn(userdata) once when the client goes away before the request is answered (a caller
 * that no longer waits for a long method's answer); fn may answer the request. */
void api_request_on_orphan(struct api_request *req, void (*fn)(void *userdata), void *userdata);

/* Turns the request's connection into an event stream after the reply; types NULL means all. */
int api_request_subscribe(struct api_request *req, char **types);
uid_t api_request_uid(const struct api_request *req);
bool api_request_is_admin(const struct api_request *req);
