/* Waiting for a file to appear: the callback runs for the watched name only, and a folder that
 * cannot be watched is an error, not a silent wait. */
#include <errno.h>
#include <event2/event.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "daemon/host/path_watch.h"
#include "test.h"

static void on_appeared(void *userdata)
{
        (*(int *)userdata)++;
}

static void touch(const char *dir, const char *name)
{
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        CHECK(fd >= 0);
        if (fd >= 0)
                close(fd);
}

static void test_appears(void)
{
        char dir[] = "/tmp/sparkd-path-watch.XXXXXX", path[PATH_MAX], other[PATH_MAX];
        struct event_base *base = event_base_new();
        struct path_watch *pw = NULL;
        int calls = 0;

        CHECK(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/lldpd.socket", dir);
        CHECK(path_watch_new(base, path, on_appeared, &calls, &pw) == 0);
        touch(dir, "something-else");
        event_base_loop(base, EVLOOP_NONBLOCK);
        CHECK(calls == 0);
        touch(dir, "lldpd.socket");
        event_base_loop(base, EVLOOP_NONBLOCK);
        CHECK(calls == 1);
        /* Moved into place, as a socket made elsewhere and renamed would be. */
        unlink(path);
        snprintf(other, sizeof(other), "%s/made-aside", dir);
        touch(dir, "made-aside");
        CHECK(rename(other, path) == 0);
        event_base_loop(base, EVLOOP_NONBLOCK);
        CHECK(calls == 2);
        path_watch_free(pw);
        unlink(path);
        snprintf(other, sizeof(other), "%s/something-else", dir);
        unlink(other);
        rmdir(dir);
        event_base_free(base);
}

static void test_unwatchable(void)
{
        struct event_base *base = event_base_new();
        struct path_watch *pw = NULL;
        int calls = 0;

        CHECK(path_watch_new(base, "/nonexistent-sparkd-dir/lldpd.socket", on_appeared, &calls, &pw) ==
              -ENOENT);
        CHECK(path_watch_new(base, "lldpd.socket", on_appeared, &calls, &pw) == -EINVAL);
        CHECK(path_watch_new(base, "/run/", on_appeared, &calls, &pw) == -EINVAL);
        event_base_free(base);
}

int main(void)
{
        RUN(test_appears);
        RUN(test_unwatchable);
        return test_result();
}
