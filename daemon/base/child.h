/*
 * Child processes with a deadline: slow or risky work (probe helpers touching the network, verbs
 * or CUDA) runs in a child that speaks JSON lines on stdout, is watched from the loop, and is
 * killed when its deadline passes, so nothing it does can stall or crash the daemon. The child
 * dies with the daemon (PR_SET_PDEATHSIG).
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct child;

struct child_ops {
        /* One JSON object per stdout line; lines that are not JSON objects are ignored. */
        void (*on_line)(struct child *c, json_object *line, void *userdata);
        /* Exactly once: exit_status as from waitpid, or timed_out when the deadline killed it. The
         * child object is freed after this returns. stderr_tail holds its last stderr bytes. */
        void (*on_exit)(struct child *c, int exit_status, bool timed_out, const char *stderr_tail,
                        void *userdata);
};

struct child_limits {
        uint64_t deadline_usec; /* killed this long after the start */
        /* Added to the daemon's niceness (capped at 19): work that keeps a CPU busy on purpose
         * yields it to the daemon's loop and to the node's own jobs. 0: the daemon's. */
        unsigned nice;
        /* A pipe to its stdin, for child_write_stdin (else /dev/null). */
        bool stdin_pipe;
};

/* argv[0] is the program's path; env entries ("NAME=value") are added to the daemon's own. */
int child_spawn(struct event_base *base, char *const *argv, char *const *env,
                const struct child_limits *limits, const struct child_ops *ops, void *userdata,
                struct child **ret);
/* Writes text (a short line: it must fit the pipe, so it never blocks) to the child's stdin and
 * closes it; -EBADF without a pipe or once written. */
int child_write_stdin(struct child *c, const char *text);
/* Kills the child now; on_exit still comes, from the loop. */
void child_kill(struct child *c);
/* Raises the soft limit on open files to the hard one (each probe helper holds two pipes, each
 * peer and API client a socket), keeping the limit found for the children spawned later; soft and
 * hard are the limits now. */
int child_raise_nofile(rlim_t *soft, rlim_t *hard);
/* For an owner that goes away before its children: kills every child whose userdata is this and
 * forgets it at once, with no callback, not even a line already read. */
void child_abandon_all(const void *userdata);
pid_t child_pid(const struct child *c);

/* Reaps exited children; the daemon calls it from its SIGCHLD handler. */
void child_reap_all(void);
