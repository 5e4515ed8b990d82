/* Children run from a loop as the daemon runs them: their lines, their environment (the daemon's
 * with the given entries in place), their exit, a program that cannot be run, and a deadline. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/base/child.h"
#include "test.h"

struct seen {
        struct event_base *base;
        char lines[4][128];
        int n_lines;
        int exit_status;
        bool timed_out;
        bool exited;
};

static void on_line(struct child *c, json_object *line, void *userdata)
{
        struct seen *s = userdata;

        if (s->n_lines < 4)
                snprintf(s->lines[s->n_lines++], sizeof(s->lines[0]), "%s",
                         json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN));
}

static void on_exit_(struct child *c, int exit_status, bool timed_out, const char *stderr_tail,
                     void *userdata)
{
        struct seen *s = userdata;

        s->exit_status = exit_status;
        s->timed_out = timed_out;
        s->exited = true;
        event_base_loopbreak(s->base);
}

static struct event_base *base;

static const struct child_ops ops = { .on_line = on_line, .on_exit = on_exit_ };

static void on_sigchld(evutil_socket_t fd, short what, void *userdata)
{
        child_reap_all();
}

static int run_niced(char *const *argv, char *const *env, uint64_t deadline_usec, unsigned nice,
                     struct seen *s)
{
        struct child_limits limits = { .deadline_usec = deadline_usec, .nice = nice };
        struct child *c;
        int r;

        *s = (struct seen){ .base = base };
        r = child_spawn(base, argv, env, &limits, &ops, s, &c);
        if (r < 0)
                return r;
        event_base_dispatch(base);
        return 0;
}

static int run(char *const *argv, char *const *env, uint64_t deadline_usec, struct seen *s)
{
        return run_niced(argv, env, deadline_usec, 0, s);
}

static void test_lines_environment_and_exit(void)
{
        char *argv[] = { "/bin/sh", "-c",
                         "printf '{\"home\":\"%s\",\"extra\":\"%s\",\"path\":%d}\\n' \"$HOME\" \"$EXTRA\" "
                         "${#PATH}; echo not json; exit 3",
                         NULL };
        char *env[] = { "HOME=/nowhere", "EXTRA=given", NULL };
        struct seen s;

        setenv("HOME", "/root-of-the-daemon", 1);
        CHECK(run(argv, env, 10 * 1000000ULL, &s) == 0);
        CHECK(s.exited && !s.timed_out);
        CHECK(WIFEXITED(s.exit_status) && WEXITSTATUS(s.exit_status) == 3);
        CHECK(s.n_lines == 1);
        /* HOME replaced, EXTRA added, PATH kept from the daemon's own environment. */
        CHECK(strstr(s.lines[0], "\"home\":\"\\/nowhere\"") != NULL);
        CHECK(strstr(s.lines[0], "\"extra\":\"given\"") != NULL);
        CHECK(strstr(s.lines[0], "\"path\":0") == NULL);
}

/* child.c learns why exec failed from what the vfork child wrote into the parent's memory.
 * qemu-user runs vfork as fork, so there nothing written in the child reaches the parent. */
static bool vfork_shares_memory(void)
{
        volatile int written = 0;
        pid_t pid = vfork();

        if (pid == 0) {
                written = 1;
                _exit(0);
        }
        if (pid > 0)
                (void)waitpid(pid, NULL, 0);
        return written == 1;
}

static void test_a_program_that_cannot_run(void)
{
        char path[] = "/tmp/sparkd-test-child-XXXXXX";
        int fd = mkstemp(path);
        char *missing[] = { "/nonexistent/sparkd-helper", NULL };
        char *not_executable[] = { path, NULL };
        struct seen s;

        CHECK(run(missing, NULL, 10 * 1000000ULL, &s) == -ENOENT);
        CHECK(!s.exited);
        CHECK(fd >= 0 && fchmod(fd, 0600) == 0);
        CHECK(run(not_executable, NULL, 10 * 1000000ULL, &s) == -EACCES);
        if (fd >= 0) {
                close(fd);
                unlink(path);
        }
}

static void test_the_deadline_kills(void)
{
        char *argv[] = { "/bin/sleep", "30", NULL };
        struct seen s;

        CHECK(run(argv, NULL, 200 * 1000ULL, &s) == 0);
        CHECK(s.exited && s.timed_out);
}

/* The child's niceness is the daemon's plus the increment, at most 19; the daemon's own stays. */
static void test_niceness(void)
{
        char *argv[] = { "/bin/sh", "-c", "printf '{\"nice\":%s}\\n' \"$(cut -d' ' -f19 /proc/self/stat)\"",
                         NULL };
        char want[32];
        struct seen s;
        int own;

        errno = 0;
        own = getpriority(PRIO_PROCESS, 0);
        CHECK(errno == 0);
        CHECK(run_niced(argv, NULL, 10 * 1000000ULL, 0, &s) == 0);
        snprintf(want, sizeof(want), "{\"nice\":%d}", own);
        CHECK(s.n_lines == 1 && strcmp(s.lines[0], want) == 0);
        CHECK(run_niced(argv, NULL, 10 * 1000000ULL, 10, &s) == 0);
        snprintf(want, sizeof(want), "{\"nice\":%d}", own + 10 > 19 ? 19 : own + 10);
        CHECK(s.n_lines == 1 && strcmp(s.lines[0], want) == 0);
        CHECK(run_niced(argv, NULL, 10 * 1000000ULL, 1000, &s) == 0);
        CHECK(s.n_lines == 1 && strcmp(s.lines[0], "{\"nice\":19}") == 0);
        CHECK(getpriority(PRIO_PROCESS, 0) == own);
}

/* An owner that goes first drops its children: killed at once, and no callback reaches it, not
 * even for a line already waiting in the pipe. Another owner's child is not touched. */
static void test_an_owner_abandons_its_children(void)
{
        char dir[] = "/tmp/sparkd-test-child-XXXXXX";
        char written[sizeof(dir) + 16], script[256];
        char *argv[] = { "/bin/sh", "-c", script, NULL };
        char *other_argv[] = { "/bin/sh", "-c", "sleep 0.2; echo '{\"other\":1}'", NULL };
        struct child_limits limits = { .deadline_usec = 30 * 1000000ULL };
        struct seen gone = { .base = base }, other = { .base = base };
        struct child *c, *c_other;
        int status;
        pid_t pid;

        CHECK(mkdtemp(dir) != NULL);
        snprintf(written, sizeof(written), "%s/written", dir);
        snprintf(script, sizeof(script), "echo '{\"late\":1}'; touch %s; exec sleep 30", written);
        CHECK(child_spawn(base, argv, NULL, &limits, &ops, &gone, &c) == 0);
        pid = child_pid(c);
        /* A barrier: the line is in the pipe once the file exists. */
        for (int i = 0; i < 1000 && access(written, F_OK) != 0; i++)
                usleep(10 * 1000);
        CHECK(access(written, F_OK) == 0);
        CHECK(child_spawn(base, other_argv, NULL, &limits, &ops, &other, &c_other) == 0);
        child_abandon_all(&gone);
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        event_base_dispatch(base);
        CHECK(other.exited && other.n_lines == 1);
        CHECK(!gone.exited && gone.n_lines == 0);
        unlink(written);
        rmdir(dir);
}

int main(void)
{
        struct event *sigchld;

        base = event_base_new();
        sigchld = evsignal_new(base, SIGCHLD, on_sigchld, NULL);
        CHECK(base && sigchld && evsignal_add(sigchld, NULL) == 0);
        RUN(test_lines_environment_and_exit);
        if (vfork_shares_memory())
                RUN(test_a_program_that_cannot_run);
        else
                SKIP_RUN(test_a_program_that_cannot_run,
                         "vfork does not share the parent's memory here (qemu-user runs it as fork)");
        RUN(test_the_deadline_kills);
        RUN(test_niceness);
        RUN(test_an_owner_abandons_its_children);
        event_free(sigchld);
        event_base_free(base);
        return test_result();
}
