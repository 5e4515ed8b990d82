/* The coordinator's side of the collective: the probe-collective method, the members from the job
 * plan, the deadlines, the unique id passed on, and the result judged and kept. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "collective_internal.h"
#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
#include "common/text_check.h"
#include "daemon/base/log.h"
#include "daemon/config/probe_kinds.h"
#include "daemon/config/probe_params.h"

/* The stages' deadlines that do not grow with the parameters: spawning a helper, CUDA's start and
 * the buffers before the unique id, and the results' way back. */
#define SPAWN_SEC  15.0
#define ID_SEC     90.0
#define REPORT_SEC 15.0

static const char *get_string(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

static void random_cid(char out[33])
{
        unsigned char b[16];

        if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
                memset(b, 0, sizeof(b)); /* getrandom on a booted kernel does not fail */
        for (size_t i = 0; i < sizeof(b); i++)
                snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static void arm_timer(struct collective *c)
{
        double left = collective_coord_next_check(c->coord) - collective_now();
        struct timeval tv = { .tv_sec = left > 0 ? (time_t)left : 0,
                              .tv_usec = left > 0 ? (suseconds_t)((left - (double)(time_t)left) * 1e6) : 0 };

        evtimer_add(c->coord_timer, &tv);
}

/* What owners' own cluster checks pass all_gather at (spark_cluster_setup.py, 16 GiB buffers):
 * 21.875 GB/s where one subnet holds every node (two nodes, a switch), 10 GB/s on a ring of three
 * or more. Only for a collective of all_gather alone, whose busbw is the one judged. */
static double field_threshold(struct collective *c, const char **source)
{
        json_object *ops = NULL;

        if (!json_object_object_get_ex(c->coord_params, "ops", &ops) || json_object_array_length(ops) != 1 ||
            strcmp(json_object_get_string(json_object_array_get_idx(ops, 0)), "all_gather") != 0)
                return 0;
        *source = c->plan_on_fabric ? "field pass line, all_gather on a switch or direct (16 GiB buffers)"
                                    : "field pass line, all_gather on a ring of 3+ (16 GiB buffers)";
        return c->plan_on_fabric ? 21.875 : 10.0;
}

/* The expectation: [probe] expect_nccl_busbw, else the slowest pair result this node holds with a
 * member (the slowest link bounds a ring's collective), else the field's pass line; 0: none. */
static double expectation(struct collective *c, const char **source, char *pair, size_t size)
{
        double lowest = 0;

        *source = "none";
        pair[0] = '\0';
        if (c->expect_busbw > 0) {
                *source = "config";
                return c->expect_busbw;
        }
        for (int i = 0; c->history && i < c->coord->n; i++) {
                json_object *list = history_query(c->history, c->coord->m[i].node_id, "nccl", 8), *v;

                for (size_t k = 0; list && k < json_object_array_length(list); k++) {
                        json_object *e = json_object_array_get_idx(list, k);
                        double busbw;

                        if (!json_object_object_get_ex(e, "ok", &v) || !json_object_get_boolean(v) ||
                            !json_object_object_get_ex(e, "measured", &v) ||
                            !json_object_object_get_ex(v, "busbw_gbytes", &v))
                                continue;
                        busbw = json_object_get_double(v);
                        if (busbw > 0 && (lowest == 0 || busbw < lowest)) {
                                lowest = busbw;
                                snprintf(pair, size, "%s", c->coord->m[i].name);
                        }
                        break;
                }
                json_object_put(list);
        }
        if (lowest > 0) {
                *source = "slowest pair result";
                return lowest;
        }
        return field_threshold(c, source);
}

static void judge(struct collective *c, json_object *report)
{
        const char *source, *status = get_string(report, "status");
        char pair[64], why[256];
        double expected = expectation(c, &source, pair, sizeof(pair)), busbw;
        json_object *v;

        json_object_object_add(report, "expected_busbw_gbytes",
                               expected > 0 ? json_object_new_double(expected) : NULL);
        json_object_object_add(report, "expected_source", json_object_new_string(source));
        if (pair[0])
                json_object_object_add(report, "expected_pair", json_object_new_string(pair));
        if (!status || strcmp(status, "ok") != 0 || !json_object_object_get_ex(report, "busbw_gbytes", &v)) {
                json_object_object_add(report, "verdict",
                                       json_object_new_string(status ? status : "failed"));
                return;
        }
        busbw = json_object_get_double(v);
        json_object_object_add(report, "value", json_object_new_double(busbw));
        if (expected > 0 && busbw < expected * c->degraded_ratio) {
                snprintf(why, sizeof(why), "busbw %.2f GB/s is below %.0f%% of the expected %.2f GB/s (%s)",
                         busbw, c->degraded_ratio * 100, expected, source);
                json_object_object_add(report, "status", json_object_new_string("degraded"));
                json_object_object_add(report, "verdict", json_object_new_string("degraded"));
                json_object_object_add(report, "error", json_object_new_string(why));
                return;
        }
        json_object_object_add(report, "verdict",
                               json_object_new_string(expected > 0 ? "ok" : "no expectation"));
}

static void finish(struct collective *c)
{
        struct collective_coord *co = c->coord;
        json_object *report = collective_coord_report(co), *record, *busbw;
        const char *status, *error;
        char started[32];
        time_t now = time(NULL);

        judge(c, report);
        if (c->cancelled) {
                json_object_object_add(report, "status", json_object_new_string("failed"));
                json_object_object_add(report, "verdict", json_object_new_string("failed"));
                json_object_object_add(report, "error",
                                       json_object_new_string("cancelled: its caller left before it ended"));
        }
        c->cancelled = false;
        status = get_string(report, "status");
        error = get_string(report, "error");
        /* Every rank still running is told to stop: none outlives the collective. */
        for (int i = 0; i < co->n; i++) {
                json_object *fields = json_object_new_object();

                json_object_object_add(fields, "reason",
                                       json_object_new_string(co->m[i].result
                                                                      ? "the collective ended"
                                                                      : "the collective ended without this "
                                                                        "rank's result"));
                collective_send(c, COLLECTIVE_ABORT, co->cid, co->m[i].node_id, fields);
        }
        now -= (time_t)((co->ended ?: collective_now()) - co->started);
        strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        json_object_object_add(report, "started_at", json_object_new_string(started));
        json_object_object_add(report, "params", json_object_get(c->coord_params));
        if (strcmp(status, "ok") == 0 || strcmp(status, "degraded") == 0)
                log_info("collective %.8s of %d nodes: %s, busbw %s GB/s", co->cid, co->n, status,
                         json_object_to_json_string(json_object_object_get(report, "busbw_gbytes")));
        else
                log_notice("collective %.8s of %d nodes %s: %s", co->cid, co->n, status, error ? error : "");
        /* In the history as an nccl result with the cluster as its peer. */
        record = json_tokener_parse(json_object_to_json_string_ext(report, JSON_C_TO_STRING_PLAIN));
        if (record && c->history) {
                json_object_object_add(record, "peer_id", json_object_new_string("cluster"));
                json_object_object_add(record, "peer", json_object_new_string("cluster"));
                json_object_object_add(record, "ok", json_object_new_boolean(strcmp(status, "ok") == 0));
                /* What the metrics read of an nccl result (sparkd_probe_nccl_busbw_bytes_per_second). */
                if (json_object_object_get_ex(report, "busbw_gbytes", &busbw)) {
                        json_object *measured = json_object_new_object();

                        json_object_object_add(measured, "busbw_gbytes", json_object_get(busbw));
                        json_object_object_add(measured, "nranks", json_object_new_int(co->n));
                        json_object_object_add(record, "measured", measured);
                }
                history_add(c->history, record);
        }
        json_object_put(record);
        json_object_put(c->last);
        c->last = json_object_get(report);
        if (c->req)
                api_request_reply(c->req, report);
        else
                json_object_put(report);
        c->req = NULL;
        collective_coord_free(co);
        free(co);
        c->coord = NULL;
        json_object_put(c->coord_params);
        c->coord_params = NULL;
        event_free(c->coord_timer);
        c->coord_timer = NULL;
        event_free(c->coord_tick);
        c->coord_tick = NULL;
}

/* The members still running hear that the coordinator is there; the caller hears the stage (and a
 * caller gone is found: its connection fails on the write). */
static void on_coord_tick(evutil_socket_t fd, short what, void *userdata)
{
        struct collective *c = userdata;
        struct collective_coord *co = c->coord;
        json_object *progress = json_object_new_object();

        (void)fd, (void)what;
        for (int i = 0; i < co->n; i++)
                if (!co->m[i].result)
                        collective_send(c, COLLECTIVE_ALIVE, co->cid, co->m[i].node_id,
                                        json_object_new_object());
        json_object_object_add(progress, "id", json_object_new_string(co->cid));
        json_object_object_add(progress, "kind", json_object_new_string("nccl"));
        json_object_object_add(progress, "phase", json_object_new_string(collective_stage_name(co->stage)));
        if (c->req)
                api_request_notify(c->req, "probe-progress", progress);
        else
                json_object_put(progress);
}

/* The caller left (sparkc interrupted): the collective ends now, every rank told to stop. */
static void on_caller_gone(void *userdata)
{
        struct collective *c = userdata;

        if (!c->coord)
                return;
        c->cancelled = true;
        c->coord->ended = collective_now();
        finish(c);
}

static void check(struct collective *c)
{
        if (collective_coord_is_over(c->coord, collective_now()))
                finish(c);
        else
                arm_timer(c);
}

static void on_coord_timer(evutil_socket_t fd, short what, void *userdata)
{
        (void)fd, (void)what;
        check(userdata);
}

void collective_coord_message(struct collective *c, const struct collective_wire *w)
{
        struct collective_coord *co = c->coord;
        int rank;

        if (!co || strcmp(co->cid, w->cid) != 0 || (rank = collective_coord_rank_of(co, w->from)) < 0)
                return;
        switch (w->type) {
        case COLLECTIVE_ID:
                if (rank != 0)
                        return;
                for (int i = 1; i < co->n; i++) {
                        json_object *fields = json_object_new_object();

                        json_object_object_add(fields, "nccl_id", json_object_new_string(w->nccl_id));
                        collective_send(c, COLLECTIVE_ID, co->cid, co->m[i].node_id, fields);
                }
                log_info("collective %.8s: rank 0's unique id sent to the %d other ranks", co->cid,
                         co->n - 1);
                return;
        case COLLECTIVE_PHASE:
                if (w->rank == rank)
                        collective_coord_phase(co, rank, w->phase, collective_now());
                break;
        case COLLECTIVE_RESULT:
                if (w->rank == rank)
                        collective_coord_result(co, rank, w->result, collective_now());
                break;
        default:
                return;
        }
        check(c);
}

void collective_coord_peer_down(struct collective *c, const char *node_id)
{
        json_object *result;
        int rank;

        if (!c->coord || (rank = collective_coord_rank_of(c->coord, node_id)) < 0 ||
            c->coord->m[rank].result)
                return;
        result = json_object_new_object();
        json_object_object_add(result, "ok", json_object_new_boolean(false));
        json_object_object_add(result, "error",
                               json_object_new_string("its daemon's peer connection went down"));
        json_object_object_add(
                result, "phase",
                json_object_new_string(c->coord->m[rank].phase[0] ? c->coord->m[rank].phase : "spawn"));
        collective_coord_result(c->coord, rank, result, collective_now());
        json_object_put(result);
        check(c);
}

void collective_coord_stop(struct collective *c)
{
        if (!c->coord)
                return;
        if (c->req)
                api_request_reply_error(c->req, RPC_INTERNAL_ERROR, "sparkd is stopping", NULL);
        c->req = NULL;
        c->coord->ended = collective_now();
        finish(c);
}

/* The members: the plan's, or those named (in the plan's rank order); -EINVAL with why. */
static int pick_members(json_object *plan, json_object *names, json_object **out, char *why, size_t size)
{
        json_object *nodes = NULL, *left = NULL, *list = json_object_new_array();

        json_object_object_get_ex(plan, "nodes", &nodes);
        json_object_object_get_ex(plan, "left_out", &left);
        for (size_t i = 0; names && i < json_object_array_length(names); i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(names, i));
                bool found = false;

                for (size_t k = 0; nodes && k < json_object_array_length(nodes) && !found; k++)
                        found = strcmp(get_string(json_object_array_get_idx(nodes, k), "name") ?: "",
                                       name) == 0;
                for (size_t k = 0; !found && left && k < json_object_array_length(left); k++) {
                        json_object *e = json_object_array_get_idx(left, k);

                        if (strcmp(get_string(e, "name") ?: "", name) == 0) {
                                snprintf(why, size, "%s is left out of the job plan: %s", name,
                                         get_string(e, "reason") ?: "");
                                json_object_put(list);
                                return -EINVAL;
                        }
                }
                if (!found) {
                        snprintf(why, size, "%s is not a node of the job plan (sparkc plan lists them)",
                                 name);
                        json_object_put(list);
                        return -EINVAL;
                }
        }
        for (size_t k = 0; nodes && k < json_object_array_length(nodes); k++) {
                json_object *e = json_object_array_get_idx(nodes, k), *m;
                const char *name = get_string(e, "name") ?: "", *address = get_string(e, "address") ?: "";
                bool wanted = !names;
                char addr[64];

                for (size_t i = 0; names && i < json_object_array_length(names) && !wanted; i++)
                        wanted = strcmp(json_object_get_string(json_object_array_get_idx(names, i)), name) ==
                                 0;
                if (!wanted)
                        continue;
                snprintf(addr, sizeof(addr), "%.*s", (int)strcspn(address, "/"), address);
                m = json_object_new_object();
                json_object_object_add(m, "name", json_object_new_string(name));
                json_object_object_add(m, "node_id", json_object_new_string(get_string(e, "node_id") ?: ""));
                json_object_object_add(m, "address", json_object_new_string(addr));
                json_object_array_add(list, m);
        }
        if (json_object_array_length(list) < 2 || json_object_array_length(list) > COLLECTIVE_NODES_MAX) {
                snprintf(why, size, "a collective needs 2 to %d members of the job plan, not %zu",
                         COLLECTIVE_NODES_MAX, json_object_array_length(list));
                json_object_put(list);
                return -EINVAL;
        }
        *out = list;
        return 0;
}

static int method_collective(struct api_request *req, json_object *params, void *userdata)
{
        struct collective *c = userdata;
        const struct probe_kind *kind = probe_kind_find("nccl");
        json_object *plan, *names = NULL, *members = NULL, *kind_params = json_object_new_object(),
                           *checked = NULL;
        double allowance[COLLECTIVE_STAGES];
        unsigned deadline;
        char why[512], cid[33];

        if (c->coord) {
                snprintf(why, sizeof(why), "busy: collective %.8s runs (one at a time)", c->coord->cid);
                api_request_reply_error(req, RPC_BUSY, why, NULL);
                json_object_put(kind_params);
                return 0;
        }
        /* No params at all (NULL): every member of the plan, the kind's defaults. */
        if (params) {
                json_object_object_foreach(params, key, value)
                        if (strcmp(key, "nodes") != 0 && strcmp(key, "kind") != 0)
                                json_object_object_add(kind_params, key, json_object_get(value));
                json_object_object_get_ex(params, "nodes", &names);
        }
        if (probe_kind_params(kind, kind_params, &checked, why, sizeof(why)) < 0 ||
            (kind->check_params && kind->check_params(checked, why, sizeof(why)) < 0)) {
                json_object_put(kind_params);
                json_object_put(checked);
                api_request_reply_error(req, RPC_INVALID_PARAMS, why, NULL);
                return 0;
        }
        json_object_put(kind_params);
        plan = c->sources.plan ? c->sources.plan(c->sources.userdata) : NULL;
        if (!plan || pick_members(plan, names, &members, why, sizeof(why)) < 0) {
                if (!plan)
                        snprintf(why, sizeof(why), "no job plan is known here");
                json_object_put(plan);
                json_object_put(checked);
                api_request_reply_error(req, RPC_INVALID_PARAMS, why, NULL);
                return 0;
        }
        c->plan_on_fabric = strcmp(get_string(plan, "plane") ?: "", "fabric") == 0;
        json_object_put(plan);
        deadline = probe_kind_deadline_sec(kind, checked);
        allowance[COLLECTIVE_STAGE_SPAWN] = SPAWN_SEC;
        allowance[COLLECTIVE_STAGE_ID] = ID_SEC;
        allowance[COLLECTIVE_STAGE_INIT] =
                (double)probe_kind_param(kind, checked, "init_timeout_ms") / 1000 + 15;
        /* A ring all_reduce of n ranks moves 2(n-1)/n of the size per rank, at most twice a pair's. */
        allowance[COLLECTIVE_STAGE_RUN] = 2.0 * deadline;
        allowance[COLLECTIVE_STAGE_REPORT] = REPORT_SEC;
        random_cid(cid);
        c->coord = calloc(1, sizeof(*c->coord));
        c->coord_timer = evtimer_new(c->base, on_coord_timer, c);
        c->coord_tick = event_new(c->base, -1, EV_PERSIST, on_coord_tick, c);
        if (!c->coord || !c->coord_timer || !c->coord_tick ||
            collective_coord_init(c->coord, cid, members, allowance, collective_now()) < 0) {
                free(c->coord);
                c->coord = NULL;
                if (c->coord_timer)
                        event_free(c->coord_timer);
                if (c->coord_tick)
                        event_free(c->coord_tick);
                c->coord_timer = c->coord_tick = NULL;
                json_object_put(members);
                json_object_put(checked);
                return -ENOMEM;
        }
        c->coord_params = checked;
        c->req = req;
        api_request_on_orphan(req, on_caller_gone, c);
        deadline = (unsigned)(SPAWN_SEC + ID_SEC + allowance[COLLECTIVE_STAGE_INIT] +
                              allowance[COLLECTIVE_STAGE_RUN] + REPORT_SEC);
        log_info("collective %.8s: %d ranks, deadline %u s", cid, c->coord->n, deadline);
        for (int i = 0; i < c->coord->n; i++) {
                json_object *fields = json_object_new_object();

                json_object_object_add(fields, "rank", json_object_new_int(i));
                json_object_object_add(fields, "nranks", json_object_new_int(c->coord->n));
                json_object_object_add(fields, "head", json_object_new_string(c->coord->m[0].address));
                json_object_object_add(fields, "params", json_object_get(checked));
                json_object_object_add(fields, "deadline_s", json_object_new_int((int)deadline));
                collective_send(c, COLLECTIVE_START, cid, c->coord->m[i].node_id, fields);
        }
        json_object_put(members);
        arm_timer(c);
        evtimer_add(c->coord_tick, &(struct timeval){ .tv_sec = COLLECTIVE_ALIVE_SEC });
        return 0;
}

static const char *const collective_kinds[] = { "nccl", NULL };

/* nodes: 1 to COLLECTIVE_NODES_MAX node names, none twice. */
static int check_nodes(json_object *value, char *expected, size_t size)
{
        size_t n = json_object_array_length(value);

        for (size_t i = 0; i < n && n <= COLLECTIVE_NODES_MAX; i++) {
                json_object *v = json_object_array_get_idx(value, i);

                if (!json_object_is_type(v, json_type_string) ||
                    !text_is_node_name(json_object_get_string(v)))
                        break;
                for (size_t k = 0; k < i; k++)
                        if (strcmp(json_object_get_string(json_object_array_get_idx(value, k)),
                                   json_object_get_string(v)) == 0)
                                goto bad;
                if (i == n - 1)
                        return 0;
        }
bad:
        snprintf(expected, size, "a list of 1 to %d node names ([A-Za-z0-9._-], at most 63), none twice",
                 COLLECTIVE_NODES_MAX);
        return -EINVAL;
}

static const struct api_param collective_params[] = {
        { .name = "nodes", .type = API_PARAM_ARRAY, .check = check_nodes },
        { .name = "kind", .type = API_PARAM_STRING, .choices = collective_kinds },
        {},
};

static const struct api_method collective_methods[] = {
        { "probe-collective", method_collective, true, collective_params,
          "the nccl kind's parameters (see probe-kinds)" },
};

int collective_register(struct collective *c, struct api_server *api)
{
        return api_server_add_methods(api, collective_methods, ARRAY_SIZE(collective_methods), c);
}
