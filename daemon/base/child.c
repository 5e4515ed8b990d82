#include "child.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/queue.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/macro.h"
#include "common/proto.h"
#include "log.h"

#define STDERR_TAIL 1024

struct child {
        LIST_ENTRY(child) link;
        struct event_base *base;
        pid_t pid;
        struct bufferevent *out;
        struct bufferevent *err;
        struct event *deadline;
        const struct child_ops *ops;
        void *userdata;
        bool timed_out;
        bool exited;
        int status;
        bool out_closed;
        bool err_closed;
        char stderr_tail[STDERR_TAIL];
        size_t stderr_len;
};

static LIST_HEAD(, child) children = LIST_HEAD_INITIALIZER(children);

static void child_finish(struct child *c)
{
        /* Both pipes drained and the process reaped: every line was delivered before on_exit. */
        if (!c->exited || !c->out_closed || !c->err_closed)
                return;
        LIST_REMOVE(c, link);
        if (c->deadline)
                event_free(c->deadline);
        if (c->out)
                bufferevent_free(c->out);
        if (c->err)
                bufferevent_free(c->err);
        c->stderr_tail[c->stderr_len] = '\0';
        c->ops->on_exit(c, c->status, c->timed_out, c->stderr_tail, c->userdata);
        free(c);
}

static void on_out_read(struct bufferevent *bev, void *userdata)
{
        struct child *c = userdata;
        struct evbuffer *in = bufferevent_get_input(bev);
        char *line;
        size_t len;

        while ((line = evbuffer_readln(in, &len, EVBUFFER_EOL_LF))) {
                json_object *obj = json_tokener_parse(line);

                if (obj && json_object_is_type(obj, json_type_object))
                        c->ops->on_line(c, obj, c->userdata);
                json_object_put(obj);
                free(line);
        }
        /* A child that writes an endless line is not a probe helper. */
        if (evbuffer_get_length(in) > SPARKD_MAX_LINE)
                child_kill(c);
}

static void on_err_read(struct bufferevent *bev, void *userdata)
{
        struct child *c = userdata;
        struct evbuffer *in = bufferevent_get_input(bev);
        char buf[STDERR_TAIL / 2];
        int n;

        while ((n = evbuffer_remove(in, buf, sizeof(buf))) > 0) {
                /* Keep the tail: the last words of a failing helper are the useful ones. */
                if (c->stderr_len + (size_t)n > STDERR_TAIL - 1) {
                        size_t drop = c->stderr_len + (size_t)n - (STDERR_TAIL - 1);

                        memmove(c->stderr_tail, c->stderr_tail + drop, c->stderr_len - drop);
                        c->stderr_len -= drop;
                }
                memcpy(c->stderr_tail + c->stderr_len, buf, (size_t)n);
                c->stderr_len += (size_t)n;
        }
}

static void on_pipe_event(struct bufferevent *bev, short what, void *userdata)
{
        struct child *c = userdata;

        if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)))
                return;
        if (bev == c->out) {
                on_out_read(bev, c);
                c->out_closed = true;
        } else {
                on_err_read(bev, c);
                c->err_closed = true;
        }
        bufferevent_disable(bev, EV_READ);
        child_finish(c);
}

static void on_deadline(evutil_socket_t fd, short what, void *userdata)
{
        struct child *c = userdata;

        c->timed_out = true;
        child_kill(c);
}

void child_kill(struct child *c)
{
        if (!c->exited)
                (void)kill(c->pid, SIGKILL);
}

pid_t child_pid(const struct child *c)
{
        return c->pid;
}

void child_reap_all(void)
{
        for (;;) {
                int status;
                pid_t pid = waitpid(-1, &status, WNOHANG);
                struct child *c, *next;

                if (pid <= 0)
                        return;
                for (c = LIST_FIRST(&children); c; c = next) {
                        next = LIST_NEXT(c, link);
                        if (c->pid != pid)
                                continue;
                        c->exited = true;
                        c->status = status;
                        /* A killed child's grandchildren may keep the pipes open: stop waiting. */
                        if (c->timed_out) {
                                c->out_closed = c->err_closed = true;
                        }
                        child_finish(c);
                        break;
                }
        }
}

int child_spawn(struct event_base *base, char *const *argv, char *const *env, uint64_t deadline_usec,
                const struct child_ops *ops, void *userdata, struct child **ret)
{
        struct timeval tv = { .tv_sec = (time_t)(deadline_usec / 1000000),
                              .tv_usec = (suseconds_t)(deadline_usec % 1000000) };
        int out[2] = { -1, -1 }, err[2] = { -1, -1 }, ready[2] = { -1, -1 };
        struct child *c = calloc(1, sizeof(*c));
        pid_t parent = getpid();
        int r = 0, exec_errno = 0;
        pid_t pid;

        if (!c)
                return -ENOMEM;
        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0) {
                r = -errno;
                goto fail;
        }
        pid = fork();
        if (pid < 0) {
                r = -errno;
                goto fail;
        }
        if (pid == 0) {
                int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

                /* Dies with the daemon, even if the daemon is killed with -9. */
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(127);
                signal(SIGPIPE, SIG_DFL);
                signal(SIGCHLD, SIG_DFL);
                if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0 ||
                    dup2(err[1], STDERR_FILENO) < 0)
                        _exit(127);
                for (char *const *e = env; e && *e; e++)
                        putenv(*e);
                execv(argv[0], argv);
                exec_errno = errno;
                (void)!write(ready[1], &exec_errno, sizeof(exec_errno));
                _exit(127);
        }
        close(out[1]);
        close(err[1]);
        close(ready[1]);
        out[1] = err[1] = ready[1] = -1;
        /* The close-on-exec pipe says whether exec worked: an error here beats a bare exit 127. */
        if (read(ready[0], &exec_errno, sizeof(exec_errno)) == (ssize_t)sizeof(exec_errno)) {
                close(ready[0]);
                close(out[0]);
                close(err[0]);
                (void)waitpid(pid, NULL, 0);
                free(c);
                return -exec_errno;
        }
        close(ready[0]);

        c->base = base;
        c->pid = pid;
        c->ops = ops;
        c->userdata = userdata;
        evutil_make_socket_nonblocking(out[0]);
        evutil_make_socket_nonblocking(err[0]);
        c->out = bufferevent_socket_new(base, out[0], BEV_OPT_CLOSE_ON_FREE);
        c->err = bufferevent_socket_new(base, err[0], BEV_OPT_CLOSE_ON_FREE);
        c->deadline = evtimer_new(base, on_deadline, c);
        LIST_INSERT_HEAD(&children, c, link);
        if (!c->out || !c->err || !c->deadline) {
                /* Still tracked: killing it makes the normal exit path clean everything up. */
                c->out_closed = !c->out;
                c->err_closed = !c->err;
                if (!c->out)
                        close(out[0]);
                if (!c->err)
                        close(err[0]);
                child_kill(c);
                return -ENOMEM;
        }
        bufferevent_setcb(c->out, on_out_read, NULL, on_pipe_event, c);
        bufferevent_setcb(c->err, on_err_read, NULL, on_pipe_event, c);
        bufferevent_enable(c->out, EV_READ);
        bufferevent_enable(c->err, EV_READ);
        evtimer_add(c->deadline, &tv);
        *ret = c;
        return 0;

fail:
        for (int i = 0; i < 2; i++) {
                if (out[i] >= 0)
                        close(out[i]);
                if (err[i] >= 0)
                        close(err[i]);
                if (ready[i] >= 0)
                        close(ready[i]);
        }
        free(c);
        return r;
}
