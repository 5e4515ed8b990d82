#include "collective.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "collective_internal.h"
#include "common/macro.h"
#include "common/strutil.h"
#include "daemon/base/log.h"
#include "daemon/config/probe_kinds.h"
#include "daemon/config/probe_params.h"
#include "probe_env.h"
#include "probe_memory.h"

static void rank_send(void *userdata, enum collective_msg type, json_object *fields)
{
        struct collective *c = userdata;

        collective_send(c, type, collective_rank_cid(c->rank), collective_rank_coordinator(c->rank), fields);
}

static void rank_ended(void *userdata)
{
        struct collective *c = userdata;

        event_active(c->rank_reaper, EV_TIMEOUT, 0);
}

static const struct collective_rank_ops rank_ops = { .send = rank_send, .ended = rank_ended };

static void on_rank_reaper(evutil_socket_t fd, short what, void *userdata)
{
        struct collective *c = userdata;

        (void)fd, (void)what;
        collective_rank_free(c->rank);
        c->rank = NULL;
}

/* A failure before any helper ran, told to the coordinator as this rank's result. */
static void refuse_start(struct collective *c, const struct collective_wire *w, bool unavailable,
                         const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void refuse_start(struct collective *c, const struct collective_wire *w, bool unavailable,
                         const char *fmt, ...)
{
        json_object *fields = json_object_new_object(), *result = json_object_new_object();
        char why[COLLECTIVE_REASON_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        log_warning("collective %.8s from %.8s refused: %s", w->cid, w->from, why);
        json_object_object_add(result, "ok", json_object_new_boolean(false));
        json_object_object_add(result, "error", json_object_new_string(why));
        json_object_object_add(result, "phase", json_object_new_string("spawn"));
        if (unavailable)
                json_object_object_add(result, "unavailable", json_object_new_boolean(true));
        json_object_object_add(fields, "rank", json_object_new_int(w->rank));
        json_object_object_add(fields, "result", result);
        collective_send(c, COLLECTIVE_RESULT, w->cid, w->from, fields);
}

/* The plan's environment for this node (as `sparkc env --for torchrun` gives a job here), what the
 * helper judges by (SPARKD_PROBE_UNIFIED_MEMORY, SPARKD_PROBE_RDMA_DEVICES, as for a pair probe),
 * then the request's overrides. *unified_memory: whether the GPU shares the node's memory (true
 * when not known, so the memory guard errs on the safe side). */
static char **rank_environment(struct collective *c, json_object *params, bool *unified_memory)
{
        json_object *env = c->sources.job_env ? c->sources.job_env(c->sources.userdata) : NULL, *vars = NULL;
        const char *overrides[16];
        size_t n = probe_kind_environment(probe_kind_find("nccl"), params, overrides, ARRAY_SIZE(overrides));
        char **out = calloc(1, sizeof(char *)), *entry;
        struct probe_env judged = { 0 };
        struct fabric_facts f;

        *unified_memory = true;
        if (c->sources.facts && c->sources.facts(c->sources.facts_userdata, &f) == 0) {
                *unified_memory = f.host.has_unified_memory;
                if (probe_env_build(&f, ENV_MODE_AUTO, NULL, NULL, 0, &judged) < 0)
                        judged = (struct probe_env){ 0 };
                fabric_facts_free(&f);
        }
        json_object_object_get_ex(env, "variables", &vars);
        for (size_t i = 0; out && vars && i < json_object_array_length(vars); i++) {
                json_object *v = json_object_array_get_idx(vars, i), *name, *value;

                if (!json_object_object_get_ex(v, "name", &name) ||
                    !json_object_object_get_ex(v, "value", &value))
                        continue;
                if (asprintf(&entry, "%s=%s", json_object_get_string(name), json_object_get_string(value)) <
                    0)
                        entry = NULL;
                if (!entry || strv_push(&out, entry) < 0) {
                        strv_free(out);
                        out = NULL;
                }
                free(entry);
        }
        for (size_t i = 0; judged.entries && i < 2; i++) {
                const char *name = i ? PROBE_ENV_RDMA_DEVICES : PROBE_ENV_UNIFIED_MEMORY;
                const char *value = probe_env_get(&judged, name);

                if (!out || !value)
                        continue;
                if (asprintf(&entry, "%s=%s", name, value) < 0)
                        entry = NULL;
                if (!entry || strv_push(&out, entry) < 0) {
                        strv_free(out);
                        out = NULL;
                }
                free(entry);
        }
        probe_env_free(&judged);
        for (size_t i = 0; out && i < n; i++)
                if (strv_push(&out, overrides[i]) < 0) {
                        strv_free(out);
                        out = NULL;
                }
        json_object_put(env);
        return out;
}

static void member_start(struct collective *c, const struct collective_wire *w)
{
        const struct probe_kind *kind = probe_kind_find("nccl");
        json_object *params = NULL;
        char err[256], helper[PATH_MAX + 32];
        bool unified;
        char **env;
        int r;

        if (c->rank) {
                refuse_start(c, w, false, "busy: this node runs rank of collective %.8s already",
                             collective_rank_cid(c->rank));
                return;
        }
        if (probe_kind_params(kind, w->params, &params, err, sizeof(err)) < 0 ||
            (kind->check_params && kind->check_params(params, err, sizeof(err)) < 0)) {
                json_object_put(params);
                refuse_start(c, w, false, "the parameters were refused here: %s", err);
                return;
        }
        snprintf(helper, sizeof(helper), "%s/%s", c->helper_dir, kind->helper);
        if (access(helper, X_OK) < 0) {
                json_object_put(params);
                refuse_start(
                        c, w, true,
                        "the nccl probe is not available on this node: its helper %.160s is missing (%m)",
                        helper);
                return;
        }
        env = rank_environment(c, params, &unified);
        if (!env) {
                json_object_put(params);
                refuse_start(c, w, false, "out of memory");
                return;
        }
        /* As the pair probe's guard: exhausting GB10's unified memory freezes the node. */
        if (probe_memory_guard(kind, params, unified, c->host_root, c->memory_margin, err, sizeof(err)) <
            0) {
                strv_free(env);
                json_object_put(params);
                refuse_start(c, w, false, "%s", err);
                return;
        }
        r = collective_rank_start(
                c->base,
                &(struct collective_rank_start){
                        .helper = helper, .msg = w, .params = params, .env = env, .nice = c->nice },
                &rank_ops, c, &c->rank);
        strv_free(env);
        json_object_put(params);
        if (r < 0) {
                refuse_start(c, w, false, "cannot start %.160s: %s", helper, strerror(-r));
                return;
        }
        log_info("collective %.8s: rank %d of %d started for %.8s", w->cid, w->rank, w->nranks, w->from);
}

/* A checked message addressed to this node. */
static void handle(struct collective *c, const struct collective_wire *w)
{
        bool is_mine = c->rank && strcmp(collective_rank_cid(c->rank), w->cid) == 0 &&
                       strcmp(collective_rank_coordinator(c->rank), w->from) == 0;

        if (is_mine)
                collective_rank_heard(c->rank);
        switch (w->type) {
        case COLLECTIVE_START:
                member_start(c, w);
                return;
        case COLLECTIVE_ALIVE:
                return;
        case COLLECTIVE_ID:
                /* To a rank above 0 from its coordinator; else rank 0's, for the coordinator
                 * (both may be this node). */
                if (is_mine && collective_rank_number(c->rank) > 0) {
                        (void)collective_rank_give_id(c->rank, w->nccl_id);
                        return;
                }
                collective_coord_message(c, w);
                return;
        case COLLECTIVE_ABORT:
                if (is_mine)
                        collective_rank_abort(c->rank, w->reason);
                return;
        case COLLECTIVE_PHASE:
        case COLLECTIVE_RESULT:
                collective_coord_message(c, w);
                return;
        }
}

static void take(struct collective *c, const char *peer, json_object *msg)
{
        struct collective_wire w;
        char err[160];

        if (collective_wire_read(msg, &w, err, sizeof(err)) < 0) {
                log_warning("a collective message from peer %.8s was refused: %s", peer ? peer : "self",
                            err);
                return;
        }
        if (peer && collective_seen_before(c, w.from, w.mid))
                return;
        if (strcmp(w.to, c->node_id) == 0) {
                handle(c, &w);
                return;
        }
        if (w.hops >= COLLECTIVE_HOPS_MAX)
                return;
        json_object_object_add(msg, "hops", json_object_new_int((int)w.hops + 1));
        collective_forward(c, w.to, msg);
}

static void on_local(evutil_socket_t fd, short what, void *userdata)
{
        struct collective *c = userdata;
        json_object *list = c->local;

        (void)fd, (void)what;
        c->local = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(list); i++)
                take(c, NULL, json_object_array_get_idx(list, i));
        json_object_put(list);
}

static void on_peer_message(const char *node_id, const char *type, json_object *msg, void *userdata)
{
        struct collective *c = userdata;

        if (strcmp(type, "peer-down") == 0) {
                if (c->rank && strcmp(collective_rank_coordinator(c->rank), node_id) == 0)
                        collective_rank_abort(c->rank,
                                              "the coordinator's connection went down: the helper was "
                                              "killed here");
                collective_coord_peer_down(c, node_id);
                return;
        }
        if (msg)
                take(c, node_id, msg);
}

int collective_new(struct event_base *base, struct peers *peers, struct history *history,
                   const char *node_id, struct collective **ret)
{
        struct collective *c = calloc(1, sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        c->base = base;
        c->peers = peers;
        c->history = history;
        c->degraded_ratio = 0.7;
        /* A restarted node numbers its messages anew: from a random start, so the others, which
         * remember the numbers they took, do not take its new messages for copies. */
        if (getrandom(&c->next_mid, sizeof(c->next_mid), 0) != (ssize_t)sizeof(c->next_mid))
                c->next_mid = 0;
        c->next_mid &= 0x3fffffff;
        snprintf(c->node_id, sizeof(c->node_id), "%s", node_id);
        c->local = json_object_new_array();
        c->local_event = event_new(base, -1, 0, on_local, c);
        c->rank_reaper = event_new(base, -1, 0, on_rank_reaper, c);
        if (!c->local || !c->local_event || !c->rank_reaper) {
                collective_free(c);
                return -ENOMEM;
        }
        r = peers_add_message_handler(peers, "collective-", on_peer_message, c);
        if (r < 0) {
                collective_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

void collective_free(struct collective *c)
{
        if (!c)
                return;
        if (c->peers)
                peers_remove_message_handler(c->peers, "collective-");
        collective_coord_stop(c);
        collective_rank_free(c->rank);
        if (c->local_event)
                event_free(c->local_event);
        if (c->rank_reaper)
                event_free(c->rank_reaper);
        json_object_put(c->local);
        json_object_put(c->last);
        free(c);
}

void collective_configure(struct collective *c, const struct sparkd_config *config)
{
        snprintf(c->helper_dir, sizeof(c->helper_dir), "%s", config->probe_helper_dir);
        snprintf(c->host_root, sizeof(c->host_root), "%s", config->host_root);
        c->memory_margin = config->probe_memory_margin;
        c->nice = config->probe_bandwidth_nice;
        c->expect_busbw = config->probe_expect_nccl_busbw;
        c->degraded_ratio = config->probe_degraded_ratio;
}

void collective_set_sources(struct collective *c, const struct collective_sources *sources)
{
        c->sources = *sources;
}

json_object *collective_last(struct collective *c)
{
        return json_object_get(c->last);
}
