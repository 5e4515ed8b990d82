#include "path_watch.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

struct path_watch {
        int fd;
        struct event *readable;
        char *name;
        void (*fn)(void *userdata);
        void *userdata;
};

static void on_readable(evutil_socket_t fd, short what, void *userdata)
{
        struct path_watch *pw = userdata;
        char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool is_ours = false;
        ssize_t n;

        while ((n = read(pw->fd, buf, sizeof(buf))) > 0)
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *e = (const struct inotify_event *)p;

                        if (e->len && strcmp(e->name, pw->name) == 0)
                                is_ours = true;
                        p += sizeof(*e) + e->len;
                }
        if (is_ours)
                pw->fn(pw->userdata);
}

int path_watch_new(struct event_base *base, const char *path, void (*fn)(void *userdata), void *userdata,
                   struct path_watch **ret)
{
        struct path_watch *pw = calloc(1, sizeof(*pw));
        const char *slash = strrchr(path, '/');
        char dir[PATH_MAX];
        int r;

        if (!pw)
                return -ENOMEM;
        pw->fd = -1;
        if (!slash || slash[1] == '\0' || (size_t)(slash - path) >= sizeof(dir)) {
                r = -EINVAL;
                goto fail;
        }
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash == path ? 1 : slash - path] = '\0';
        pw->name = strdup(slash + 1);
        pw->fn = fn;
        pw->userdata = userdata;
        pw->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (!pw->name || pw->fd < 0) {
                r = pw->name ? -errno : -ENOMEM;
                goto fail;
        }
        if (inotify_add_watch(pw->fd, dir, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR) < 0) {
                r = -errno;
                goto fail;
        }
        pw->readable = event_new(base, pw->fd, EV_READ | EV_PERSIST, on_readable, pw);
        if (!pw->readable || event_add(pw->readable, NULL) < 0) {
                r = -ENOMEM;
                goto fail;
        }
        *ret = pw;
        return 0;
fail:
        path_watch_free(pw);
        return r;
}

void path_watch_free(struct path_watch *pw)
{
        if (!pw)
                return;
        if (pw->readable)
                event_free(pw->readable);
        if (pw->fd >= 0)
                close(pw->fd);
        free(pw->name);
        free(pw);
}
