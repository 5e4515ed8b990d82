#include "collective_coord.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const stage_names[] = {
        [COLLECTIVE_STAGE_SPAWN] = "spawn",   [COLLECTIVE_STAGE_ID] = "unique id",
        [COLLECTIVE_STAGE_INIT] = "init",     [COLLECTIVE_STAGE_RUN] = "run",
        [COLLECTIVE_STAGE_REPORT] = "report", [COLLECTIVE_STAGE_DONE] = "done",
};

const char *collective_stage_name(enum collective_stage stage)
{
        return stage_names[stage];
}

/* sparkd-probe-nccl's phases (nccl_run.c) in order: cuda_init, buffers, then listening (rank 0,
 * the id made) or unique_id (the others, waiting for it), comm_init, running (each size), finalize. */
enum collective_stage collective_stage_of_phase(const char *phase, int rank)
{
        if (strcmp(phase, "cuda_init") == 0 || strcmp(phase, "buffers") == 0 ||
            strcmp(phase, "unique_id") == 0)
                return COLLECTIVE_STAGE_ID;
        /* Rank 0 has made the id: it waits for the others in init. */
        if (strcmp(phase, "listening") == 0 || strcmp(phase, "comm_init") == 0)
                return rank == 0 || strcmp(phase, "comm_init") == 0 ? COLLECTIVE_STAGE_INIT
                                                                    : COLLECTIVE_STAGE_ID;
        if (strcmp(phase, "finalize") == 0)
                return COLLECTIVE_STAGE_REPORT;
        return COLLECTIVE_STAGE_RUN;
}

static const char *get_string(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

static bool get_bool(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

int collective_coord_init(struct collective_coord *c, const char *cid, json_object *members,
                          const double allowance[COLLECTIVE_STAGES], double now)
{
        size_t n = json_object_array_length(members);

        *c = (struct collective_coord){ .n = (int)n, .started = now, .stage_since = now, .failed_rank = -1 };
        if (n < 2 || n > COLLECTIVE_NODES_MAX)
                return -EINVAL;
        snprintf(c->cid, sizeof(c->cid), "%s", cid);
        memcpy(c->allowance, allowance, sizeof(c->allowance));
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(members, i);
                struct collective_member *m = &c->m[i];

                snprintf(m->node_id, sizeof(m->node_id), "%s", get_string(e, "node_id") ?: "");
                snprintf(m->name, sizeof(m->name), "%s", get_string(e, "name") ?: "");
                snprintf(m->address, sizeof(m->address), "%s", get_string(e, "address") ?: "");
        }
        return 0;
}

void collective_coord_free(struct collective_coord *c)
{
        for (int i = 0; i < c->n; i++) {
                json_object_put(c->m[i].result);
                c->m[i].result = NULL;
        }
}

int collective_coord_rank_of(const struct collective_coord *c, const char *node_id)
{
        for (int i = 0; i < c->n; i++)
                if (strcmp(c->m[i].node_id, node_id) == 0)
                        return i;
        return -1;
}

/* The collective's stage is its slowest rank's; entering a new one starts that one's deadline. */
static void advance(struct collective_coord *c, double now)
{
        enum collective_stage low = COLLECTIVE_STAGE_DONE;

        for (int i = 0; i < c->n; i++)
                if (c->m[i].stage < low)
                        low = c->m[i].stage;
        if (low > c->stage) {
                c->stage = low;
                c->stage_since = now;
        }
}

void collective_coord_phase(struct collective_coord *c, int rank, const char *phase, double now)
{
        struct collective_member *m = &c->m[rank];
        enum collective_stage s = collective_stage_of_phase(phase, rank);

        if (m->result)
                return;
        snprintf(m->phase, sizeof(m->phase), "%s", phase);
        if (s > m->stage)
                m->stage = s;
        advance(c, now);
}

void collective_coord_result(struct collective_coord *c, int rank, json_object *result, double now)
{
        struct collective_member *m = &c->m[rank];

        if (m->result)
                return;
        m->result = json_object_get(result);
        m->stage = COLLECTIVE_STAGE_DONE;
        if (!get_bool(result, "ok") && !c->failed_at) {
                c->failed_at = now;
                c->failed_rank = rank;
        }
        advance(c, now);
}

static bool all_reported(const struct collective_coord *c)
{
        for (int i = 0; i < c->n; i++)
                if (!c->m[i].result)
                        return false;
        return true;
}

bool collective_coord_is_over(struct collective_coord *c, double now)
{
        enum collective_stage s = c->stage;

        if (c->ended)
                return true;
        if (all_reported(c) || (c->failed_at && now >= c->failed_at + COLLECTIVE_GRACE_SEC)) {
                c->ended = now;
                return true;
        }
        if (s >= COLLECTIVE_STAGE_DONE || now < c->stage_since + c->allowance[s])
                return false;
        c->timed_out = true;
        c->ended = now;
        for (int i = 0; i < c->n; i++) {
                struct collective_member *m = &c->m[i];

                if (m->result || m->stage != s)
                        continue;
                /* Made aside: the phase is a field of the same member the error goes to. */
                char error[sizeof(m->error)];

                snprintf(error, sizeof(error), "did not leave the %s stage within %.0f s (%s%.*s)",
                         stage_names[s], c->allowance[s], m->phase[0] ? "last phase " : "no phase heard",
                         (int)sizeof(m->phase), m->phase);
                memcpy(m->error, error, sizeof(error));
                if (!c->error[0])
                        snprintf(c->error, sizeof(c->error), "rank %d (%.63s) %.400s", i, m->name, m->error);
        }
        return true;
}

double collective_coord_next_check(const struct collective_coord *c)
{
        double t = c->stage < COLLECTIVE_STAGE_DONE ? c->stage_since + c->allowance[c->stage] : c->started;

        if (c->failed_at && c->failed_at + COLLECTIVE_GRACE_SEC < t)
                t = c->failed_at + COLLECTIVE_GRACE_SEC;
        return t;
}

/* Every rank's result must say each size was right: the ops of rank 0 with correct ANDed. */
static json_object *merged_ops(const struct collective_coord *c)
{
        json_object *ops0 = NULL, *out;

        /* The results were checked where they came in (collective_wire.c); the types once more,
         * as an array call on anything else aborts. */
        if (!c->m[0].result || !json_object_object_get_ex(c->m[0].result, "ops", &ops0) ||
            !json_object_is_type(ops0, json_type_array))
                return NULL;
        out = json_tokener_parse(json_object_to_json_string_ext(ops0, JSON_C_TO_STRING_PLAIN));
        for (int i = 1; out && i < c->n; i++) {
                json_object *ops = NULL;

                if (!c->m[i].result || !json_object_object_get_ex(c->m[i].result, "ops", &ops) ||
                    !json_object_is_type(ops, json_type_array))
                        continue;
                for (size_t o = 0; o < json_object_array_length(out) && o < json_object_array_length(ops);
                     o++) {
                        json_object *mine = NULL, *theirs = NULL;

                        json_object_object_get_ex(json_object_array_get_idx(out, o), "sizes", &mine);
                        json_object_object_get_ex(json_object_array_get_idx(ops, o), "sizes", &theirs);
                        if (!json_object_is_type(mine, json_type_array) ||
                            !json_object_is_type(theirs, json_type_array))
                                continue;
                        for (size_t s = 0;
                             s < json_object_array_length(mine) && s < json_object_array_length(theirs); s++)
                                if (!get_bool(json_object_array_get_idx(theirs, s), "correct"))
                                        json_object_object_add(json_object_array_get_idx(mine, s), "correct",
                                                               json_object_new_boolean(false));
                }
        }
        return out;
}

static json_object *member_json(const struct collective_coord *c, int i)
{
        static const char *const copied[] = { "error",     "phase",       "unavailable", "diagnosis",
                                              "transport", "phases_ms",   "nccl_env",    "degraded_reason",
                                              "device",    "nccl_version" };
        const struct collective_member *m = &c->m[i];
        json_object *o = json_object_new_object(), *v;
        const char *status = !m->result                           ? (c->timed_out ? "timeout" : "aborted")
                             : get_bool(m->result, "ok")          ? "ok"
                             : get_bool(m->result, "unavailable") ? "unavailable"
                                                                  : "failed";

        json_object_object_add(o, "rank", json_object_new_int(i));
        json_object_object_add(o, "name", json_object_new_string(m->name));
        json_object_object_add(o, "node_id", json_object_new_string(m->node_id));
        json_object_object_add(o, "address", json_object_new_string(m->address));
        json_object_object_add(o, "status", json_object_new_string(status));
        json_object_object_add(o, "stage", json_object_new_string(stage_names[m->stage]));
        json_object_object_add(o, "last_phase", json_object_new_string(m->phase));
        for (size_t k = 0; m->result && k < sizeof(copied) / sizeof(copied[0]); k++)
                if (json_object_object_get_ex(m->result, copied[k], &v))
                        json_object_object_add(o, copied[k], json_object_get(v));
        if (!m->result)
                json_object_object_add(o, "error",
                                       json_object_new_string(m->error[0]
                                                                      ? m->error
                                                                      : "no result: the collective ended "
                                                                        "before this rank reported"));
        return o;
}

/* The first failure, named: node, phase and why: the first rank that failed, else the first
 * without a good result. */
static void first_failure(const struct collective_coord *c, char *buf, size_t size, bool *all_unavailable)
{
        int first = c->failed_rank;

        *all_unavailable = true;
        for (int i = 0; i < c->n; i++) {
                const struct collective_member *m = &c->m[i];

                if (!m->result || !get_bool(m->result, "unavailable"))
                        *all_unavailable = false;
                if (first < 0 && !(m->result && get_bool(m->result, "ok")))
                        first = i;
        }
        buf[0] = '\0';
        if (first >= 0) {
                const struct collective_member *m = &c->m[first];

                snprintf(buf, size, "rank %d (%s) in phase %s: %s", first, m->name,
                         m->result     ? get_string(m->result, "phase") ?: m->phase
                         : m->phase[0] ? m->phase
                                       : "none",
                         m->result     ? get_string(m->result, "error") ?: "failed"
                         : m->error[0] ? m->error
                                       : "no result");
        }
}

json_object *collective_coord_report(const struct collective_coord *c)
{
        json_object *o = json_object_new_object(), *nodes = json_object_new_array(), *ops = merged_ops(c),
                    *v;
        char why[COLLECTIVE_REASON_MAX + 128];
        bool all_unavailable, ok = all_reported(c);
        const char *status;

        for (int i = 0; i < c->n; i++) {
                json_object_array_add(nodes, member_json(c, i));
                ok = ok && get_bool(c->m[i].result, "ok");
        }
        first_failure(c, why, sizeof(why), &all_unavailable);
        status = ok ? "ok" : c->timed_out ? "timeout" : all_unavailable ? "unavailable" : "failed";
        json_object_object_add(o, "cid", json_object_new_string(c->cid));
        json_object_object_add(o, "kind", json_object_new_string("nccl"));
        json_object_object_add(o, "collective", json_object_new_boolean(true));
        json_object_object_add(o, "status", json_object_new_string(status));
        if (!ok)
                json_object_object_add(o, "error",
                                       json_object_new_string(c->timed_out && c->error[0] ? c->error : why));
        json_object_object_add(o, "nranks", json_object_new_int(c->n));
        json_object_object_add(o, "stage", json_object_new_string(stage_names[c->stage]));
        json_object_object_add(
                o, "duration_ms",
                json_object_new_int64((int64_t)(((c->ended ?: c->started) - c->started) * 1000)));
        json_object_object_add(o, "nodes", nodes);
        if (ops)
                json_object_object_add(o, "ops", ops);
        if (ok && json_object_object_get_ex(c->m[0].result, "busbw_gbytes", &v))
                json_object_object_add(o, "busbw_gbytes", json_object_get(v));
        if (ok && json_object_object_get_ex(c->m[0].result, "algbw_gbytes", &v))
                json_object_object_add(o, "algbw_gbytes", json_object_get(v));
        return o;
}
