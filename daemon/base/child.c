#include "child.h"

#include <errno.h>
#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/queue.h>
#include <sys/resource.h>
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
        int in; /* the write end of its stdin, -1 when none or written */
        char stderr_tail[STDERR_TAIL];
        size_t stderr_len;
};

static LIST_HEAD(, child) children = LIST_HEAD_INITIALIZER(children);

/* The open-file limit the daemon was started with, given back to its children. */
static struct rlimit nofile_at_start;
static bool is_nofile_raised;

int child_raise_nofile(rlim_t *soft, rlim_t *hard)
{
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return -errno;
        nofile_at_start = rl;
        if (rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        return -errno;
                is_nofile_raised = true;
        }
        *soft = rl.rlim_cur;
        *hard = rl.rlim_max;
        return 0;
}

/* Off the list, its events freed: nothing of it runs from the loop again. */
static void child_detach(struct child *c)
{
        LIST_REMOVE(c, link);
        if (c->deadline)
                event_free(c->deadline);
        if (c->out)
                bufferevent_free(c->out);
        if (c->err)
                bufferevent_free(c->err);
        if (c->in >= 0)
                close(c->in);
        c->in = -1;
}

static void child_finish(struct child *c)
{
        /* Both pipes drained and the process reaped: every line was delivered before on_exit. */
        if (!c->exited || !c->out_closed || !c->err_closed)
                return;
        child_detach(c);
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

void child_abandon_all(const void *userdata)
{
        struct child *c, *next;

        for (c = LIST_FIRST(&children); c; c = next) {
                next = LIST_NEXT(c, link);
                if (c->userdata != userdata)
                        continue;
                child_kill(c);
                child_detach(c);
                free(c);
        }
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

/* The daemon's environment with env's entries ("NAME=value") in place of its own of that name. */
static char **environment_with(char *const *env)
{
        size_t n = 0, k = 0;
        char **v;

        for (char **e = environ; e && *e; e++)
                n++;
        for (char *const *e = env; e && *e; e++)
                n++;
        v = calloc(n + 1, sizeof(*v));
        if (!v)
                return NULL;
        for (char **e = environ; e && *e; e++) {
                size_t len = strcspn(*e, "=");
                bool is_replaced = false;

                for (char *const *o = env; o && *o && !is_replaced; o++)
                        is_replaced = strncmp(*o, *e, len) == 0 && (*o)[len] == '=';
                if (!is_replaced)
                        v[k++] = *e;
        }
        for (char *const *e = env; e && *e; e++)
                v[k++] = *e;
        return v;
}

/* In the child until exec: only what a vfork child may do (its own fd table and signal
 * dispositions, the parent's memory); exec_errno, in the parent's memory, says why exec failed. */
_Noreturn static void child_exec(pid_t parent, const sigset_t *mask, char *const *argv, char *const *envp,
                                 int niceness, int in, int out, int err, volatile int *exec_errno)
{
        struct sigaction dfl = { .sa_handler = SIG_DFL };
        int null;

        /* The daemon's handlers are its own, and must not run here once signals are unblocked;
         * its ignored SIGPIPE would be inherited across exec. */
        for (int sig = 1; sig < NSIG; sig++) {
                struct sigaction sa;

                if (sig == SIGPIPE || sig == SIGCHLD ||
                    (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN))
                        (void)sigaction(sig, &dfl, NULL);
        }
        /* Dies with the daemon, even if the daemon is killed with -9. */
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
                _exit(127);
        null = in >= 0 ? in : open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0 ||
            dup2(err, STDERR_FILENO) < 0) {
                *exec_errno = errno;
                _exit(127);
        }
        /* Helpers may still use select(), which cannot take descriptors past 1023. */
        if (is_nofile_raised)
                (void)setrlimit(RLIMIT_NOFILE, &nofile_at_start);
        /* Only ever lower: a failure leaves the child at the daemon's priority, still correct. */
        (void)setpriority(PRIO_PROCESS, 0, niceness);
        (void)sigprocmask(SIG_SETMASK, mask, NULL);
        execve(argv[0], argv, envp);
        *exec_errno = errno;
        _exit(127);
}

/* The niceness a child with this increment runs at: the daemon's plus it, at most 19. */
static int child_niceness(unsigned increment)
{
        int own;

        errno = 0;
        own = getpriority(PRIO_PROCESS, 0);
        if (own == -1 && errno != 0)
                own = 0;
        return increment >= (unsigned)(19 - own) ? 19 : own + (int)increment;
}

int child_spawn(struct event_base *base, char *const *argv, char *const *env,
                const struct child_limits *limits, const struct child_ops *ops, void *userdata,
                struct child **ret)
{
        struct timeval tv = { .tv_sec = (time_t)(limits->deadline_usec / 1000000),
                              .tv_usec = (suseconds_t)(limits->deadline_usec % 1000000) };
        int niceness = child_niceness(limits->nice);
        int out[2] = { -1, -1 }, err[2] = { -1, -1 }, in[2] = { -1, -1 };
        struct child *c = calloc(1, sizeof(*c));
        _cleanup_free_ char **envp = environment_with(env);
        pid_t parent = getpid();
        volatile int exec_errno = 0;
        sigset_t all, mask;
        int r = 0;
        pid_t pid;

        if (!c || !envp) {
                free(c);
                return -ENOMEM;
        }
        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
            (limits->stdin_pipe && pipe2(in, O_CLOEXEC) < 0)) {
                r = -errno;
                goto fail;
        }
        /* vfork: the daemon waits only until the child has called exec, and no copy of its page
         * tables is made (a fork of the daemon took 3 to 24 ms on a loaded machine, and waiting on a
         * pipe for the exec up to 40 ms more). No signal handler may run in the child meanwhile. */
        sigfillset(&all);
        (void)pthread_sigmask(SIG_SETMASK, &all, &mask);
        pid = vfork();
        if (pid == 0)
                child_exec(parent, &mask, argv, envp, niceness, in[0], out[1], err[1], &exec_errno);
        r = pid < 0 ? -errno : 0;
        (void)pthread_sigmask(SIG_SETMASK, &mask, NULL);
        if (r < 0)
                goto fail;
        close(out[1]);
        close(err[1]);
        if (in[0] >= 0)
                close(in[0]);
        out[1] = err[1] = in[0] = -1;
        /* An error here beats a bare exit 127. */
        if (exec_errno != 0) {
                close(out[0]);
                close(err[0]);
                if (in[1] >= 0)
                        close(in[1]);
                (void)waitpid(pid, NULL, 0);
                free(c);
                return -exec_errno;
        }

        c->base = base;
        c->pid = pid;
        c->ops = ops;
        c->userdata = userdata;
        c->in = in[1];
        if (c->in >= 0)
                evutil_make_socket_nonblocking(c->in);
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
                if (in[i] >= 0)
                        close(in[i]);
        }
        free(c);
        return r;
}

int child_write_stdin(struct child *c, const char *text)
{
        size_t len = strlen(text);
        ssize_t n;

        if (c->in < 0)
                return -EBADF;
        n = write(c->in, text, len);
        close(c->in);
        c->in = -1;
        if (n < 0)
                return -errno;
        return (size_t)n == len ? 0 : -EAGAIN;
}
