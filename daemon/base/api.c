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
#include <unistd.h>

#include "api_admission.h"
#include "api_conn.h"
#include "api_socket.h"
#include "common/jsonrpc.h"
#include "common/macro.h"
#include "log.h"
#include "socket_flush.h"

/* A subscriber that does not read its events is dropped before it costs more than this. */
#define SUBSCRIBER_MAX_BACKLOG (1024 * 1024)
/* A storm of refused clients is logged once per this interval, with a count, not line by line. */
#define REFUSAL_LOG_INTERVAL_USEC (10 * 1000000ULL)

static void server_log_refusal(struct api_server *s, uid_t uid, const char *why)
{
        uint64_t now = api_monotonic_usec();

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
                        api_conn_reap(conn);
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
        (void)api_conn_new(s, fd, cred.uid, cred.pid, is_admin);
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
                (void)socket_flush_now(conn->bev);
                api_conn_free(conn);
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
                        api_conn_free(conn);
                        continue;
                }
                api_conn_send(conn, msg);
        }
        json_object_put(msg);
}
