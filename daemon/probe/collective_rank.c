#include "collective_rank.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/macro.h"
#include "daemon/base/child.h"
#include "daemon/base/log.h"
#include "daemon/config/probe_kinds.h"
#include "daemon/config/probe_params.h"

/* What the member allows past the collective's deadline before it kills its helper itself: the
 * coordinator ends the collective first and says so. */
#define RANK_MARGIN_SEC 5

struct collective_rank {
        char cid[33];
        char coordinator[33];
        int rank;
        struct child *child;
        struct event *deadline;
        struct event *silence; /* no word from the coordinator for COLLECTIVE_SILENCE_SEC */
        const struct collective_rank_ops *ops;
        void *userdata;
        char phase[COLLECTIVE_PHASE_MAX + 1];
        char why_killed[COLLECTIVE_REASON_MAX];
        bool result_sent;
        /* The helper's result, held until it has exited: the coordinator answers once every rank
         * sent its result, and a collective asked for right after must not find this node still
         * running the last one's helper (NCCL and CUDA take a while to let go). */
        json_object *result_held;
};

const char *collective_rank_cid(const struct collective_rank *r)
{
        return r->cid;
}

int collective_rank_number(const struct collective_rank *r)
{
        return r->rank;
}

const char *collective_rank_coordinator(const struct collective_rank *r)
{
        return r->coordinator;
}

static void send_result(struct collective_rank *r, json_object *result)
{
        json_object *fields = json_object_new_object();

        /* The log tail is the first to go when the result would not fit a message. */
        if (strlen(json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN)) > COLLECTIVE_RESULT_MAX)
                json_object_object_del(result, "nccl_log_tail");
        if (strlen(json_object_to_json_string_ext(result, JSON_C_TO_STRING_PLAIN)) > COLLECTIVE_RESULT_MAX)
                json_object_object_del(result, "nccl_env");
        json_object_object_add(fields, "rank", json_object_new_int(r->rank));
        json_object_object_add(fields, "result", result);
        r->result_sent = true;
        r->ops->send(r->userdata, COLLECTIVE_RESULT, fields);
}

static void on_line(struct child *c, json_object *line, void *userdata)
{
        struct collective_rank *r = userdata;
        json_object *v, *fields;
        const char *phase;

        (void)c;
        if (json_object_object_get_ex(line, "result", &v) && json_object_is_type(v, json_type_object)) {
                if (!r->result_sent && !r->result_held)
                        r->result_held = json_object_get(v);
                return;
        }
        if (!json_object_object_get_ex(line, "phase", &v) || !(phase = json_object_get_string(v)) ||
            strlen(phase) > COLLECTIVE_PHASE_MAX)
                return;
        if (strcmp(phase, "listening") == 0 && r->rank == 0 &&
            json_object_object_get_ex(line, "nccl_id", &v) &&
            strlen(json_object_get_string(v)) == COLLECTIVE_ID_HEX) {
                fields = json_object_new_object();
                json_object_object_add(fields, "nccl_id", json_object_get(v));
                r->ops->send(r->userdata, COLLECTIVE_ID, fields);
        }
        if (strcmp(phase, r->phase) == 0)
                return;
        snprintf(r->phase, sizeof(r->phase), "%s", phase);
        fields = json_object_new_object();
        json_object_object_add(fields, "rank", json_object_new_int(r->rank));
        json_object_object_add(fields, "phase", json_object_new_string(phase));
        r->ops->send(r->userdata, COLLECTIVE_PHASE, fields);
}

static void on_exit_(struct child *c, int status, bool timed_out, const char *stderr_tail, void *userdata)
{
        struct collective_rank *r = userdata;
        char why[COLLECTIVE_REASON_MAX + 200];

        (void)c;
        r->child = NULL;
        if (!r->result_sent && r->result_held) {
                send_result(r, r->result_held);
                r->result_held = NULL;
        }
        if (!r->result_sent) {
                json_object *result = json_object_new_object();

                if (r->why_killed[0])
                        snprintf(why, sizeof(why), "%s", r->why_killed);
                else if (timed_out)
                        snprintf(why, sizeof(why), "the helper ran past its deadline and was killed");
                else if (WIFSIGNALED(status))
                        snprintf(why, sizeof(why), "the helper was killed by signal %d (%s)%s%.200s",
                                 WTERMSIG(status), strsignal(WTERMSIG(status)), *stderr_tail ? ": " : "",
                                 stderr_tail);
                else
                        snprintf(why, sizeof(why), "the helper exited with status %d and no result%s%.200s",
                                 WEXITSTATUS(status), *stderr_tail ? ": " : "", stderr_tail);
                json_object_object_add(result, "ok", json_object_new_boolean(false));
                json_object_object_add(result, "error", json_object_new_string(why));
                json_object_object_add(result, "phase",
                                       json_object_new_string(r->phase[0] ? r->phase : "spawn"));
                send_result(r, result);
        }
        r->ops->ended(r->userdata);
}

static const struct child_ops rank_child_ops = { .on_line = on_line, .on_exit = on_exit_ };

static void on_silence(evutil_socket_t fd, short what, void *userdata)
{
        char why[128];

        (void)fd, (void)what;
        snprintf(why, sizeof(why),
                 "no word from the coordinator for %d s: it went away, and the helper was killed here",
                 COLLECTIVE_SILENCE_SEC);
        collective_rank_abort(userdata, why);
}

void collective_rank_heard(struct collective_rank *r)
{
        struct timeval tv = { .tv_sec = COLLECTIVE_SILENCE_SEC };

        if (r->child)
                evtimer_add(r->silence, &tv);
}

static void on_deadline(evutil_socket_t fd, short what, void *userdata)
{
        (void)fd, (void)what;
        collective_rank_abort(userdata,
                              "the collective's deadline passed with no word from its coordinator: "
                              "the helper was killed here");
}

int collective_rank_start(struct event_base *base, const struct collective_rank_start *s,
                          const struct collective_rank_ops *ops, void *userdata,
                          struct collective_rank **ret)
{
        const struct probe_kind *kind = probe_kind_find("nccl");
        struct collective_rank *r = calloc(1, sizeof(*r));
        char *argv[48], storage[48][24], deadline[16], rank[16], nranks[16];
        struct timeval tv = { .tv_sec = s->msg->deadline_s + RANK_MARGIN_SEC };
        struct child_limits limits = { .deadline_usec = (uint64_t)s->msg->deadline_s * 1000000,
                                       .nice = s->nice,
                                       .stdin_pipe = s->msg->rank > 0 };
        size_t n = 0;
        int e;

        if (!r)
                return -ENOMEM;
        snprintf(r->cid, sizeof(r->cid), "%s", s->msg->cid);
        snprintf(r->coordinator, sizeof(r->coordinator), "%s", s->msg->from);
        r->rank = s->msg->rank;
        r->ops = ops;
        r->userdata = userdata;
        snprintf(deadline, sizeof(deadline), "%u", s->msg->deadline_s);
        snprintf(rank, sizeof(rank), "%d", s->msg->rank);
        snprintf(nranks, sizeof(nranks), "%d", s->msg->nranks);
        argv[n++] = (char *)s->helper;
        argv[n++] = "--json";
        argv[n++] = "--deadline";
        argv[n++] = deadline;
        if (s->msg->rank == 0) {
                argv[n++] = "--server";
        } else {
                argv[n++] = "--client";
                argv[n++] = (char *)s->msg->head;
                argv[n++] = "--rank";
                argv[n++] = rank;
                argv[n++] = "--id-stdin";
        }
        argv[n++] = "--nranks";
        argv[n++] = nranks;
        e = probe_kind_helper_args(kind, s->params,
                                   s->msg->rank == 0 ? PROBE_SIDE_SERVER : PROBE_SIDE_CLIENT, argv, &n,
                                   ARRAY_SIZE(argv) - 1, storage);
        argv[n] = NULL;
        r->deadline = evtimer_new(base, on_deadline, r);
        r->silence = evtimer_new(base, on_silence, r);
        if (e >= 0 && r->deadline && r->silence)
                e = child_spawn(base, argv, s->env, &limits, &rank_child_ops, r, &r->child);
        if (e < 0 || !r->deadline || !r->silence) {
                /* A spawn that failed after the fork leaves the killed child to be reaped with r
                 * as its userdata: cut it loose before r goes. */
                child_abandon_all(r);
                if (r->deadline)
                        event_free(r->deadline);
                if (r->silence)
                        event_free(r->silence);
                free(r);
                return e < 0 ? e : -ENOMEM;
        }
        evtimer_add(r->deadline, &tv);
        collective_rank_heard(r);
        *ret = r;
        return 0;
}

int collective_rank_give_id(struct collective_rank *r, const char *nccl_id)
{
        char line[COLLECTIVE_ID_HEX + 2];

        if (!r->child || r->rank == 0)
                return -ESRCH;
        snprintf(line, sizeof(line), "%s\n", nccl_id);
        return child_write_stdin(r->child, line);
}

void collective_rank_abort(struct collective_rank *r, const char *reason)
{
        if (!r->child)
                return;
        snprintf(r->why_killed, sizeof(r->why_killed), "%s", reason);
        log_notice("collective %.8s: rank %d stopped: %s", r->cid, r->rank, reason);
        child_kill(r->child);
}

void collective_rank_free(struct collective_rank *r)
{
        if (!r)
                return;
        child_abandon_all(r);
        json_object_put(r->result_held);
        event_free(r->deadline);
        event_free(r->silence);
        free(r);
}
