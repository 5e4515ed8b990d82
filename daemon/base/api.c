#include "api.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api_admission.h"
#include "api_params.h"
#include "api_socket.h"
#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "log.h"

/* A client that starts a line must finish it within this time; idle clients may stay. */
#define PARTIAL_LINE_TIMEOUT_SEC 30
/* A subscriber that does not read its events is dropped before it costs more than this. */
#define SUBSCRIBER_MAX_BACKLOG (1024 * 1024)
/* A storm of refused clients is logged once per this interval, with a count, not line by line. */
#define REFUSAL_LOG_INTERVAL_USEC (10 * 1000000ULL)

struct method_entry {
        const struct api_method *method;
        void *userdata;
};

struct api_conn {
        struct api_server *server;
        struct bufferevent *bev;
        LIST_ENTRY(api_conn) link;
        LIST_HEAD(, api_request) pending;
        uid_t uid;
        pid_t pid;
        bool is_admin;
        bool closing;
        bool subscribed;
        bool hung_up;                /* the peer closed its socket: nobody reads what is sent */
        char **event_types;          /* NULL: every type */
        uint64_t partial_since_usec; /* 0: no half-sent line */
};

struct api_request {
        struct api_conn *conn;        /* NULL once the client went away */
        LIST_ENTRY(api_request) link; /* on conn->pending, or on conn_free's orphans */
        bool is_linked;
        json_object *id;
        bool has_id;
        bool subscribe;
        char **subscribe_types;
        void (*on_orphan)(void *userdata);
        void *orphan_userdata;
};

struct api_server {
        struct event_base *base;
        struct evconnlistener *listener;
        struct event *accept_retry;
        char *path;
        bool activated;
        /* The socket this server made, so that only it is ever removed at stop. */
        dev_t socket_dev;
        ino_t socket_ino;
        struct api_access access;
        struct method_entry *methods;
        size_t n_methods;
        LIST_HEAD(, api_conn) conns;
        unsigned n_conns;
        uint64_t refusal_logged_usec; /* 0: none logged yet */
        uint64_t refusals_unlogged;
};

static void conn_free(struct api_conn *conn)
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

static void conn_send(struct api_conn *conn, json_object *msg)
{
        struct evbuffer *out = bufferevent_get_output(conn->bev);
        size_t len;
        const char *s = jsonrpc_to_string(msg, &len);

        if (evbuffer_add(out, s, len) < 0 || evbuffer_add(out, "\n", 1) < 0)
                log_warning("api: cannot queue a reply for pid %d: out of memory", (int)conn->pid);
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
                conn_free(conn);
}

/* The one place a result gets the API's version: every method's answer carries it. */
static json_object *result_with_version(json_object *result)
{
        if (!result)
                result = json_object_new_object();
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
                conn_send(req->conn, msg);
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
                conn_send(req->conn, msg);
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
        conn_send(req->conn, msg);
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

        conn_send(conn, msg);
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

static uint64_t monotonic_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
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
        now = monotonic_usec();
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
                conn_free(conn);
}

static void conn_on_write(struct bufferevent *bev, void *userdata)
{
        struct api_conn *conn = userdata;

        if (conn_is_done(conn))
                conn_free(conn);
}

static void conn_on_event(struct bufferevent *bev, short what, void *userdata)
{
        struct api_conn *conn = userdata;

        if (what & BEV_EVENT_EOF) {
                /* The client may have shut down only its sending side and still read replies. */
                conn_process_input(conn, true);
                conn_close_after_flush(conn);
                if (conn_is_done(conn) || conn->subscribed)
                        conn_free(conn);
                return;
        }
        if (what & BEV_EVENT_TIMEOUT)
                conn_log_partial_timeout(conn);
        conn_free(conn);
}

static void server_log_refusal(struct api_server *s, uid_t uid, const char *why)
{
        uint64_t now = monotonic_usec();

        if (s->refusal_logged_usec && now - s->refusal_logged_usec < REFUSAL_LOG_INTERVAL_USEC) {
                s->refusals_unlogged++;
                return;
        }
        if (s->refusals_unlogged)
                log_warning("api: refusing a client: %s (uid %u); %" PRIu64
                            " more refused since the last report",
                            why, (unsigned)uid, s->refusals_unlogged);
        else
                log_warning("api: refusing a client: %s (uid %u)", why, (unsigned)uid);
        s->refusal_logged_usec = now;
        s->refusals_unlogged = 0;
}

/* Served like an EOF (a request sent just before the close still runs), then let go at once:
 * nobody is left to read an answer. */
static void conn_reap(struct api_conn *conn)
{
        struct evbuffer *in = bufferevent_get_input(conn->bev);
        int fd = bufferevent_getfd(conn->bev);

        while (!conn->closing && evbuffer_read(in, fd, SPARKD_MAX_LINE) > 0)
                conn_process_input(conn, false);
        conn_process_input(conn, true);
        conn_free(conn);
}

/* A client that hung up counts until the loop gets to its EOF, which a burst of clients delays:
 * those are let go before a newcomer is refused for connections already gone. */
static void server_reap_hung_up(struct api_server *s)
{
        _cleanup_free_ struct pollfd *fds = calloc(s->n_conns, sizeof(*fds));
        struct api_conn *conn;
        size_t n = 0;

        if (!fds)
                return;
        LIST_FOREACH(conn, &s->conns, link)
                fds[n++] = (struct pollfd){ .fd = bufferevent_getfd(conn->bev), .events = POLLIN };
        if (poll(fds, n, 0) <= 0)
                return;
        n = 0;
        LIST_FOREACH(conn, &s->conns, link)
                conn->hung_up = fds[n++].revents & (POLLHUP | POLLERR);
        /* Freeing one may answer, and so free, others (a cancelled probe starts a queued one):
         * the walk starts over after each. */
restart:
        LIST_FOREACH(conn, &s->conns, link) {
                if (conn->hung_up) {
                        conn_reap(conn);
                        goto restart;
                }
        }
}

static int server_admit(struct api_server *s, uid_t uid, bool is_admin, char *why, size_t size)
{
        struct api_admission_load load;
        struct api_conn *conn;
        bool reaped = false;
        int r;

        for (;;) {
                load = (struct api_admission_load){ .open = s->n_conns };
                LIST_FOREACH(conn, &s->conns, link)
                        load.open_of_uid += conn->uid == uid;
                r = api_admission_check(&s->access, uid, is_admin, &load, why, size);
                if (r == 0 || reaped)
                        return r;
                server_reap_hung_up(s);
                reaped = true;
        }
}

static void server_on_accept(struct evconnlistener *listener, evutil_socket_t fd, struct sockaddr *addr,
                             int socklen, void *userdata)
{
        struct api_server *s = userdata;
        struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
        socklen_t len = sizeof(cred);
        struct api_conn *conn;
        char why[256];
        bool is_admin;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
                log_warning("api: refusing a client whose credentials cannot be read: %m");
                close(fd);
                return;
        }
        is_admin = cred.uid == 0 ||
                   (s->access.has_admin_gid && api_socket_peer_in_group(fd, cred.gid, s->access.admin_gid));
        if (server_admit(s, cred.uid, is_admin, why, sizeof(why)) < 0) {
                server_log_refusal(s, cred.uid, why);
                api_admission_refuse(fd, why);
                return;
        }
        conn = calloc(1, sizeof(*conn));
        if (!conn) {
                close(fd);
                return;
        }
        conn->bev = bufferevent_socket_new(s->base, fd, BEV_OPT_CLOSE_ON_FREE);
        if (!conn->bev) {
                free(conn);
                close(fd);
                return;
        }
        conn->server = s;
        conn->uid = cred.uid;
        conn->pid = cred.pid;
        conn->is_admin = is_admin;
        LIST_INIT(&conn->pending);
        LIST_INSERT_HEAD(&s->conns, conn, link);
        s->n_conns++;
        bufferevent_setcb(conn->bev, conn_on_read, conn_on_write, conn_on_event, conn);
        bufferevent_enable(conn->bev, EV_READ | EV_WRITE);
}

static void server_on_accept_retry(evutil_socket_t fd, short what, void *userdata)
{
        struct api_server *s = userdata;

        evconnlistener_enable(s->listener);
}

static void server_on_accept_error(struct evconnlistener *listener, void *userdata)
{
        struct api_server *s = userdata;
        struct timeval pause = { .tv_sec = 1 };
        int err = EVUTIL_SOCKET_ERROR();

        /* Out of file descriptors and the like pass; stop accepting for a moment instead of
         * spinning on a listener that is always readable. */
        log_warning("api: accept failed: %s; pausing new connections for 1 s", strerror(err));
        evconnlistener_disable(listener);
        evtimer_add(s->accept_retry, &pause);
}

int api_server_new(struct event_base *base, const char *path, int listen_fd, const struct api_access *access,
                   struct api_server **ret)
{
        struct api_server *s = calloc(1, sizeof(*s));
        int fd = listen_fd;

        if (!s)
                return -ENOMEM;
        s->base = base;
        s->access = *access;
        s->activated = listen_fd >= 0;
        LIST_INIT(&s->conns);
        s->path = s->activated ? api_socket_bound_path(listen_fd, path) : strdup(path);
        if (!s->path)
                goto nomem;
        if (!s->activated) {
                struct stat st;

                fd = api_socket_bind(path, access);
                if (fd < 0) {
                        free(s->path);
                        free(s);
                        return fd;
                }
                if (stat(path, &st) == 0) {
                        s->socket_dev = st.st_dev;
                        s->socket_ino = st.st_ino;
                }
        } else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
                free(s->path);
                free(s);
                return -errno;
        }
        /* Backlog 0: the socket already listens; -1 would make libevent listen() again with 128. */
        s->listener = evconnlistener_new(base, server_on_accept, s,
                                         LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
        s->accept_retry = evtimer_new(base, server_on_accept_retry, s);
        if (!s->listener || !s->accept_retry) {
                if (!s->listener)
                        close(fd);
                api_server_free(s);
                return -ENOMEM;
        }
        evconnlistener_set_error_cb(s->listener, server_on_accept_error);
        *ret = s;
        return 0;

nomem:
        free(s);
        return -ENOMEM;
}

void api_server_free(struct api_server *s)
{
        if (!s)
                return;
        while (!LIST_EMPTY(&s->conns)) {
                struct api_conn *conn = LIST_FIRST(&s->conns);
                struct api_request *req;

                /* The daemon is stopping: nobody is to act on the clients leaving. */
                LIST_FOREACH(req, &conn->pending, link)
                        req->on_orphan = NULL;
                /* One last try, without waiting, so subscribers see the daemon-stopping event. */
                (void)evbuffer_write(bufferevent_get_output(conn->bev), bufferevent_getfd(conn->bev));
                conn_free(conn);
        }
        if (s->listener)
                evconnlistener_free(s->listener);
        if (s->accept_retry)
                event_free(s->accept_retry);
        /* A socket systemd handed over is systemd's to remove; and what replaced ours at the
         * path since (another daemon's socket, a file) is not ours either. */
        if (!s->activated && s->path) {
                struct stat st;

                if (lstat(s->path, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == s->socket_dev &&
                    st.st_ino == s->socket_ino)
                        (void)unlink(s->path);
        }
        free(s->methods);
        free(s->path);
        free(s);
}

const char *api_server_path(const struct api_server *s)
{
        return s->path;
}

bool api_server_is_activated(const struct api_server *s)
{
        return s->activated;
}

int api_server_set_access(struct api_server *s, const struct api_access *access)
{
        s->access = *access;
        if (s->activated)
                return 0;
        return api_socket_apply_access(s->path, access);
}

int api_server_add_methods(struct api_server *s, const struct api_method *methods, size_t n, void *userdata)
{
        struct method_entry *v = realloc(s->methods, (s->n_methods + n) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        s->methods = v;
        for (size_t i = 0; i < n; i++)
                v[s->n_methods++] = (struct method_entry){ .method = &methods[i], .userdata = userdata };
        return 0;
}

static bool conn_wants(const struct api_conn *conn, const char *type)
{
        if (!conn->event_types)
                return true;
        for (char **t = conn->event_types; *t; t++)
                if (strcmp(*t, type) == 0)
                        return true;
        return false;
}

void api_server_publish(struct api_server *s, json_object *event)
{
        json_object *type_obj, *msg;
        const char *type;
        struct api_conn *conn, *next;

        if (!json_object_object_get_ex(event, "event", &type_obj))
                return;
        type = json_object_get_string(type_obj);
        msg = jsonrpc_notification_new("event", json_object_get(event));
        for (conn = LIST_FIRST(&s->conns); conn; conn = next) {
                next = LIST_NEXT(conn, link);
                if (!conn->subscribed || conn->closing || !conn_wants(conn, type))
                        continue;
                if (evbuffer_get_length(bufferevent_get_output(conn->bev)) > SUBSCRIBER_MAX_BACKLOG) {
                        log_warning("api: dropping subscriber pid %d: it stopped reading its events",
                                    (int)conn->pid);
                        conn_free(conn);
                        continue;
                }
                conn_send(conn, msg);
        }
        json_object_put(msg);
}
