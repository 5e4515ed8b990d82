#include "rpc.h"

#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/macro.h"
#include "common/proto.h"

struct rpc_client {
        int fd;
        int timeout_ms;
        int64_t next_id;
        char *buf; /* bytes read but not yet consumed */
        size_t len;
        size_t size;
};

int rpc_connect(const char *path, int timeout_ms, struct rpc_client **ret)
{
        struct sockaddr_un addr = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;
        struct rpc_client *c;

        if (strlen(path) >= sizeof(addr.sun_path))
                return -ENAMETOOLONG;
        strcpy(addr.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* connect() on a UNIX socket does not wait for the daemon to accept; a full backlog
         * returns EAGAIN at once, so there is nothing to time out here. */
        if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
                return -errno;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->fd = TAKE_FD(fd);
        c->timeout_ms = timeout_ms;
        c->next_id = 1;
        *ret = c;
        return 0;
}

void rpc_close(struct rpc_client *c)
{
        if (!c)
                return;
        close(c->fd);
        free(c->buf);
        free(c);
}

int rpc_socket_audience(const char *path, char *buf, size_t size)
{
        struct stat st;
        struct passwd *owner;
        struct group *group;
        char owner_id[24], group_id[24];

        if (stat(path, &st) < 0)
                return -errno;
        owner = getpwuid(st.st_uid);
        group = getgrgid(st.st_gid);
        snprintf(owner_id, sizeof(owner_id), "uid %u", (unsigned)st.st_uid);
        snprintf(group_id, sizeof(group_id), "%u", (unsigned)st.st_gid);
        /* Connecting takes write permission on the socket. */
        if (st.st_mode & S_IWGRP)
                snprintf(buf, size, "%s and the group %s", owner ? owner->pw_name : owner_id,
                         group ? group->gr_name : group_id);
        else
                snprintf(buf, size, "%s only", owner ? owner->pw_name : owner_id);
        return 0;
}

static int64_t now_ms(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int send_all(int fd, const char *data, size_t len, int timeout_ms)
{
        int64_t deadline = now_ms() + timeout_ms;

        while (len > 0) {
                struct pollfd p = { .fd = fd, .events = POLLOUT };
                int left = (int)(deadline - now_ms());
                ssize_t n;

                if (left <= 0)
                        return -ETIMEDOUT;
                if (poll(&p, 1, left) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                n = send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                continue;
                        return -errno;
                }
                data += n;
                len -= (size_t)n;
        }
        return 0;
}

/* Returns the length of the next complete line in the buffer, reading more as needed. */
static int read_line(struct rpc_client *c, int timeout_ms, size_t *line_len)
{
        int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;

        for (;;) {
                char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                ssize_t n;
                int wait_ms = -1, r;

                if (nl) {
                        *line_len = (size_t)(nl - c->buf);
                        return 0;
                }
                if (c->len > SPARKD_MAX_REPLY)
                        return -EMSGSIZE;
                if (c->size - c->len < 65536) {
                        char *b = realloc(c->buf, c->size + 65536);

                        if (!b)
                                return -ENOMEM;
                        c->buf = b;
                        c->size += 65536;
                }
                if (deadline >= 0) {
                        wait_ms = (int)(deadline - now_ms());
                        if (wait_ms <= 0)
                                return -ETIMEDOUT;
                }
                r = poll(&p, 1, wait_ms);
                if (r < 0 && errno == EINTR)
                        return -EINTR;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                n = recv(c->fd, c->buf + c->len, c->size - c->len, 0);
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return -ECONNRESET;
                c->len += (size_t)n;
        }
}

int rpc_read_message(struct rpc_client *c, int timeout_ms, struct jsonrpc_response *resp)
{
        size_t len = 0;
        int r = read_line(c, timeout_ms, &len);

        if (r < 0)
                return r;
        r = jsonrpc_response_parse(c->buf, len, resp);
        memmove(c->buf, c->buf + len + 1, c->len - len - 1);
        c->len -= len + 1;
        return r;
}

int rpc_call(struct rpc_client *c, const char *method, json_object *params, struct jsonrpc_response *resp)
{
        return rpc_call_notify(c, method, params, resp, NULL, NULL);
}

int rpc_call_notify(struct rpc_client *c, const char *method, json_object *params,
                    struct jsonrpc_response *resp,
                    void (*on_notify)(const char *method, json_object *params, void *userdata),
                    void *userdata)
{
        int64_t id = c->next_id++;
        json_object *msg = jsonrpc_request_new(method, params, id);
        size_t len;
        const char *s = jsonrpc_to_string(msg, &len);
        int64_t deadline = now_ms() + c->timeout_ms;
        int r;

        r = send_all(c->fd, s, len, c->timeout_ms);
        if (r == 0)
                r = send_all(c->fd, "\n", 1, c->timeout_ms);
        json_object_put(msg);
        if (r < 0)
                return r;

        /* Notifications of an earlier subscription may come first; the answer carries our id. */
        for (;;) {
                int left = (int)(deadline - now_ms());

                if (left <= 0)
                        return -ETIMEDOUT;
                r = rpc_read_message(c, left, resp);
                if (r < 0)
                        return r;
                if (!resp->method && resp->id && json_object_is_type(resp->id, json_type_int) &&
                    json_object_get_int64(resp->id) == id)
                        return 0;
                if (!resp->method && (!resp->id || json_object_is_type(resp->id, json_type_null)) &&
                    resp->error_message)
                        return 0; /* the daemon refused the whole line (too busy, too large) */
                if (resp->method && on_notify)
                        on_notify(resp->method, resp->params, userdata);
                jsonrpc_response_done(resp);
        }
}
