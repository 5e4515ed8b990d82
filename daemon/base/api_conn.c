#include "api_conn.h"

#include <errno.h>
#include <event2/buffer.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api_params.h"
#include "api_write.h"
#include "clock.h"
#include "common/json_raw.h"
#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "heap_trim.h"
#include "log.h"

/* A client that starts a line must finish it within this time; idle clients may stay. */
#define PARTIAL_LINE_TIMEOUT_SEC 30

void api_conn_free(struct api_conn *conn)
{
        LIST_HEAD(, api_request) orphans = LIST_HEAD_INITIALIZER(orphans);
        struct api_request *req;

        while ((req = LIST_FIRST(&conn->pending))) {
                LIST_REMOVE(req, link);
                req->conn = NULL;
                LIST_INSERT_HEAD(&orphans, req, link);
        }
        LIST_REMOVE(conn, link);
        conn->server->n_conns--;
        bufferevent_free(conn->bev);
        strv_free(conn->event_types);
        free(conn);
        /* Told only now, with the connection gone: the owner may answer (and so free) the request,
         * and also others still on the list (a cancelled probe starts a queued one that fails at
         * once): request_free takes those off it. */
        while ((req = LIST_FIRST(&orphans))) {
                LIST_REMOVE(req, link);
                req->is_linked = false;
                if (req->on_orphan)
                        req->on_orphan(req->orphan_userdata);
        }
}

#define API_MAX_SINGLE_WRITE (4 * 1024 * 1024)

/* A reply this large (a whole probe history) was built and buffered in megabytes of heap that
 * would stay resident once freed: it is given back when the reply has gone out. */
#define API_TRIM_AFTER (512 * 1024)

/* An answer past what sparkc reads: the client gets an error naming the limit instead, which
 * says more than a connection its reader gives up on. */
static int replace_oversized(struct api_conn *conn, json_object *msg, struct evbuffer *text)
{
        size_t len = evbuffer_get_length(text);
        json_object *id = NULL, *error;
        char message[160];
        int r;

        json_object_object_get_ex(msg, "id", &id);
        snprintf(message, sizeof(message),
                 "the answer would be %zu bytes, over the %d MiB an answer may have", len,
                 SPARKD_MAX_REPLY >> 20);
        log_warning("api: an answer for pid %d was not sent: %s", (int)conn->pid, message);
        evbuffer_drain(text, len);
        error = jsonrpc_error_new(id, RPC_INTERNAL_ERROR, message, NULL);
        r = api_write_json(text, error);
        json_object_put(error);
        return r == 0 && evbuffer_add(text, "\n", 1) < 0 ? -ENOMEM : r;
}

void api_conn_send(struct api_conn *conn, json_object *msg)
{
        struct evbuffer *text = evbuffer_new();
        size_t len = 0;
        int r;

        /* Held texts (a node's sections, the links view) go out from where they lie: a whole
         * cluster view is not copied into one text for each call. Written aside first, so that
         * a message cut short by a failed allocation never reaches the client. */
        r = text ? api_write_json(text, msg) : -ENOMEM;
        if (r == 0)
                r = evbuffer_add(text, "\n", 1) < 0 ? -ENOMEM : 0;
        if (r == 0 && evbuffer_get_length(text) > SPARKD_MAX_REPLY)
                r = replace_oversized(conn, msg, text);
        if (r == 0) {
                len = evbuffer_get_length(text);
                r = evbuffer_add_buffer(bufferevent_get_output(conn->bev), text) < 0 ? -ENOMEM : 0;
        }
        if (text)
                evbuffer_free(text);
        if (r < 0)
                log_warning("api: cannot queue a reply for pid %d: out of memory", (int)conn->pid);
        if (len >= API_TRIM_AFTER)
                conn->sent_large = true;
}

/* Stops reading; the connection goes once what is queued has been written. */
static void conn_close_after_flush(struct api_conn *conn)
{
        conn->closing = true;
        bufferevent_disable(conn->bev, EV_READ);
}

static bool conn_is_done(struct api_conn *conn)
{
        /* A request still being worked on keeps a half-closed client around for its answer. */
        return conn->closing && LIST_EMPTY(&conn->pending) &&
               evbuffer_get_length(bufferevent_get_output(conn->bev)) == 0;
}

static void request_free(struct api_request *req)
{
        if (req->is_linked)
                LIST_REMOVE(req, link);
        json_object_put(req->id);
        strv_free(req->subscribe_types);
        free(req);
}

static void conn_free_if_done(struct api_conn *conn)
{
        if (conn && conn_is_done(conn))
                api_conn_free(conn);
}

/* A result kept as JSON text (json_raw) that holds an object gets the version as its first
 * member; any other is left as it is. */
static json_object *raw_result_with_version(json_object *result)
{
        const char *text = json_raw_text(result), *body;
        char *with = NULL;

        if (!text || text[0] != '{')
                return result;
        body = text + 1 + strspn(text + 1, " \t\r\n");
        if (asprintf(&with, "{\"api_version\":%d%s%s", SPARKD_API_VERSION, *body == '}' ? "" : ",", body) <
            0)
                return result; /* without memory, the answer goes out without its version */
        json_object_put(result);
        return json_raw_take(with);
}

/* The one place a result gets the API's version: every method's answer carries it. */
static json_object *result_with_version(json_object *result)
{
        if (!result)
                result = json_object_new_object();
        if (json_raw_is(result))
                return raw_result_with_version(result);
        if (json_object_is_type(result, json_type_object))
                json_object_object_add(result, "api_version", json_object_new_int(SPARKD_API_VERSION));
        return result;
}

void api_request_reply(struct api_request *req, json_object *result)
{
        struct api_conn *conn = req->conn;

        if (req->conn && req->has_id) {
                json_object *msg = jsonrpc_result_new(req->id, result_with_version(result));

                result = NULL;
                api_conn_send(req->conn, msg);
                json_object_put(msg);
        }
        json_object_put(result);
        if (req->conn && req->subscribe) {
                strv_free(req->conn->event_types);
                req->conn->event_types = TAKE_PTR(req->subscribe_types);
                req->conn->subscribed = true;
        }
        request_free(req);
        conn_free_if_done(conn);
}

void api_request_reply_error(struct api_request *req, int code, const char *message, json_object *data)
{
        struct api_conn *conn = req->conn;

        if (req->conn && req->has_id) {
                json_object *msg = jsonrpc_error_new(req->id, code, message, data);

                data = NULL;
                api_conn_send(req->conn, msg);
                json_object_put(msg);
        }
        json_object_put(data);
        request_free(req);
        conn_free_if_done(conn);
}

void api_request_notify(struct api_request *req, const char *method, json_object *params)
{
        json_object *msg;

        if (!req->conn) {
                json_object_put(params);
                return;
        }
        msg = jsonrpc_notification_new(method, params);
        api_conn_send(req->conn, msg);
        json_object_put(msg);
}

bool api_request_is_orphan(const struct api_request *req)
{
        return !req->conn;
}

void api_request_on_orphan(struct api_request *req, void (*fn)(void *userdata), void *userdata)
{
        req->on_orphan = fn;
        req->orphan_userdata = userdata;
}

int api_request_subscribe(struct api_request *req, char **types)
{
        strv_free(req->subscribe_types);
        req->subscribe_types = types;
        req->subscribe = true;
        return 0;
}

uid_t api_request_uid(const struct api_request *req)
{
        return req->conn ? req->conn->uid : (uid_t)-1;
}

bool api_request_is_admin(const struct api_request *req)
{
        return req->conn && req->conn->is_admin;
}

static void conn_send_error(struct api_conn *conn, json_object *id, int code, const char *message)
{
        json_object *msg = jsonrpc_error_new(id, code, message, NULL);

        api_conn_send(conn, msg);
        json_object_put(msg);
}

static const struct method_entry *server_find_method(struct api_server *s, const char *name)
{
        for (size_t i = 0; i < s->n_methods; i++)
                if (strcmp(s->methods[i].method->name, name) == 0)
                        return &s->methods[i];
        return NULL;
}

static void conn_handle_line(struct api_conn *conn, const char *line, size_t len)
{
        struct jsonrpc_request rpc;
        const struct method_entry *entry;
        struct api_request *req;
        json_object *params;
        const char *why = NULL;
        char message[API_PARAMS_WHY_MAX];
        int code = 0, r;

        if (strspn(line, " \t\r") == len)
                return;
        r = jsonrpc_request_parse(line, len, &rpc, &code, &why);
        if (r < 0) {
                conn_send_error(conn, rpc.id, code, why);
                jsonrpc_request_done(&rpc);
                return;
        }
        entry = server_find_method(conn->server, rpc.method);
        if (!entry) {
                snprintf(message, sizeof(message), "unknown method \"%.64s\"", rpc.method);
                if (rpc.has_id)
                        conn_send_error(conn, rpc.id, RPC_METHOD_NOT_FOUND, message);
                jsonrpc_request_done(&rpc);
                return;
        }
        if (entry->method->needs_admin && !conn->is_admin) {
                log_notice("api: refused %s for uid %u (pid %d): not root or in the admin group",
                           entry->method->name, (unsigned)conn->uid, (int)conn->pid);
                snprintf(message, sizeof(message), "permission denied: \"%s\" needs root or the admin group",
                         entry->method->name);
                if (rpc.has_id)
                        conn_send_error(conn, rpc.id, RPC_PERMISSION_DENIED, message);
                jsonrpc_request_done(&rpc);
                return;
        }
        if (api_params_check(entry->method, rpc.params, &params, message, sizeof(message)) < 0) {
                if (rpc.has_id)
                        conn_send_error(conn, rpc.id, RPC_INVALID_PARAMS, message);
                jsonrpc_request_done(&rpc);
                return;
        }

        req = calloc(1, sizeof(*req));
        if (!req) {
                conn_send_error(conn, rpc.id, RPC_INTERNAL_ERROR, "out of memory");
                jsonrpc_request_done(&rpc);
                return;
        }
        req->conn = conn;
        req->id = json_object_get(rpc.id);
        req->has_id = rpc.has_id;
        LIST_INSERT_HEAD(&conn->pending, req, link);
        req->is_linked = true;

        r = entry->method->fn(req, params, entry->userdata);
        if (r < 0) {
                log_error("api: %s failed: %s", entry->method->name, strerror(-r));
                snprintf(message, sizeof(message), "%s failed: %s", entry->method->name, strerror(-r));
                api_request_reply_error(req, RPC_INTERNAL_ERROR, message, NULL);
        }
        jsonrpc_request_done(&rpc);
}

static void conn_refuse_oversize(struct api_conn *conn)
{
        char message[128];

        log_notice("api: closing connection of pid %d: request longer than %d bytes", (int)conn->pid,
                   SPARKD_MAX_LINE);
        snprintf(message, sizeof(message), "request longer than %d bytes", SPARKD_MAX_LINE);
        conn_send_error(conn, NULL, RPC_INVALID_REQUEST, message);
        evbuffer_drain(bufferevent_get_input(conn->bev),
                       evbuffer_get_length(bufferevent_get_input(conn->bev)));
        conn_close_after_flush(conn);
}

uint64_t api_monotonic_usec(void)
{
        return clock_monotonic_usec();
}

/* A read timeout restarts with every byte, so a client that trickles a line would never time
 * out; the clock therefore runs from the line's first byte and the timeout is what is left. */
static bool conn_arm_partial_timeout(struct api_conn *conn, size_t buffered)
{
        const uint64_t limit = (uint64_t)PARTIAL_LINE_TIMEOUT_SEC * 1000000;
        uint64_t now, left;
        struct timeval tv;

        if (buffered == 0) {
                conn->partial_since_usec = 0;
                bufferevent_set_timeouts(conn->bev, NULL, NULL);
                return true;
        }
        now = api_monotonic_usec();
        if (!conn->partial_since_usec)
                conn->partial_since_usec = now;
        if (now - conn->partial_since_usec >= limit)
                return false;
        left = limit - (now - conn->partial_since_usec);
        tv = (struct timeval){ .tv_sec = (time_t)(left / 1000000),
                               .tv_usec = (suseconds_t)(left % 1000000) };
        bufferevent_set_timeouts(conn->bev, &tv, NULL);
        return true;
}

static void conn_log_partial_timeout(const struct api_conn *conn)
{
        log_notice("api: closing connection of pid %d: no complete line within %d s", (int)conn->pid,
                   PARTIAL_LINE_TIMEOUT_SEC);
}

/* Handles every complete line in the input; returns false when the input holds an oversize line. */
static void conn_process_input(struct api_conn *conn, bool at_eof)
{
        struct evbuffer *in = bufferevent_get_input(conn->bev);

        while (!conn->closing) {
                size_t eol_len = 0, len;
                struct evbuffer_ptr eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
                char *line;

                if (eol.pos < 0) {
                        len = evbuffer_get_length(in);
                        if (len > SPARKD_MAX_LINE) {
                                conn_refuse_oversize(conn);
                                return;
                        }
                        if (!at_eof || len == 0)
                                break;
                        /* A last request without its newline, from a client that half-closed. */
                        eol.pos = (ssize_t)len;
                        eol_len = 0;
                }
                if (eol.pos > SPARKD_MAX_LINE) {
                        conn_refuse_oversize(conn);
                        return;
                }
                len = (size_t)eol.pos;
                line = malloc(len + 1);
                if (!line) {
                        conn_close_after_flush(conn);
                        return;
                }
                evbuffer_remove(in, line, len);
                evbuffer_drain(in, eol_len);
                line[len] = '\0';
                conn->partial_since_usec = 0;
                conn_handle_line(conn, line, len);
                free(line);
        }
        if (conn->closing)
                return;
        /* Only a half-sent line is on the clock: an idle client may wait as long as it likes. */
        if (!conn_arm_partial_timeout(conn, evbuffer_get_length(in))) {
                conn_log_partial_timeout(conn);
                evbuffer_drain(in, evbuffer_get_length(in));
                conn_close_after_flush(conn);
        }
}

static void conn_on_read(struct bufferevent *bev, void *userdata)
{
        struct api_conn *conn = userdata;

        conn_process_input(conn, false);
        if (conn_is_done(conn))
                api_conn_free(conn);
}

static void conn_on_write(struct bufferevent *bev, void *userdata)
{
        struct api_conn *conn = userdata;

        if (conn->sent_large) {
                conn->sent_large = false;
                heap_trim_soon();
        }
        if (conn_is_done(conn))
                api_conn_free(conn);
}

static void conn_on_event(struct bufferevent *bev, short what, void *userdata)
{
        struct api_conn *conn = userdata;

        if (what & BEV_EVENT_EOF) {
                /* The client may have shut down only its sending side and still read replies. */
                conn_process_input(conn, true);
                conn_close_after_flush(conn);
                if (conn_is_done(conn) || conn->subscribed)
                        api_conn_free(conn);
                return;
        }
        if (what & BEV_EVENT_TIMEOUT)
                conn_log_partial_timeout(conn);
        api_conn_free(conn);
}

void api_conn_reap(struct api_conn *conn)
{
        struct evbuffer *in = bufferevent_get_input(conn->bev);
        int fd = bufferevent_getfd(conn->bev);

        while (!conn->closing && evbuffer_read(in, fd, SPARKD_MAX_LINE) > 0)
                conn_process_input(conn, false);
        conn_process_input(conn, true);
        api_conn_free(conn);
}

/* A client that hung up counts until the loop gets to its EOF, which a burst of clients delays:
 * those are let go before a newcomer is refused for connections already gone. */
struct api_conn *api_conn_new(struct api_server *s, int fd, uid_t uid, pid_t pid, bool is_admin)
{
        struct api_conn *conn = calloc(1, sizeof(*conn));

        if (!conn) {
                close(fd);
                return NULL;
        }
        conn->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
        if (!conn->bev) {
                free(conn);
                close(fd);
                return NULL;
        }
        conn->server = s;
        conn->uid = uid;
        conn->pid = pid;
        conn->is_admin = is_admin;
        LIST_INIT(&conn->pending);
        LIST_INSERT_HEAD(&s->conns, conn, link);
        s->n_conns++;
        bufferevent_setcb(conn->bev, conn_on_read, conn_on_write, conn_on_event, conn);
        /* libevent writes at most 16 KiB a wakeup by default: a cluster view of some 600 KiB took
         * forty turns of the loop. As much as the socket takes, in one writev. */
        (void)bufferevent_set_max_single_write(conn->bev, API_MAX_SINGLE_WRITE);
        bufferevent_enable(conn->bev, EV_READ | EV_WRITE);
        return conn;
}
