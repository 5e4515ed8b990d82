#include "probe_judge.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/macro.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"
#include "probe_diagnosis.h"

static double measured(json_object *result, const char *key)
{
        json_object *v;

        return result && json_object_object_get_ex(result, key, &v) ? json_object_get_double(v) : 0;
}

/* A helper may find the probe degraded whatever the number says (NCCL on TCP sockets where the
 * node has RDMA devices, say): its result then says why in "degraded_reason". */
static bool degraded_by_helper(struct probe *p, json_object *out, const char **status)
{
        json_object *v;
        const char *reason;

        if (!json_object_object_get_ex(p->result, "degraded_reason", &v) ||
            !json_object_is_type(v, json_type_string))
                return false;
        reason = json_object_get_string(v);
        *status = "degraded";
        json_object_object_add(out, "degraded_reason", json_object_new_string(reason));
        {
                struct log_field f[] = { { "peer", p->peer_name },
                                         { "peer_id", p->peer_id },
                                         { "kind", p->kind->name },
                                         { "reason", reason } };

                event_emit(EVENT_PROBE_DEGRADED, f, ARRAY_SIZE(f), "%s probe to %s degraded: %s",
                           p->kind->name, p->peer_name, reason);
        }
        return true;
}

/* The expectation for this peer and kind: the config's, or the learned baseline. */
static void judge_expectation(struct probes *ps, struct probe *p, json_object *out, const char **status)
{
        const struct probe_kind *k = p->kind;
        double configured = ps->expect[probe_kind_index(k)];
        double from_hardware =
                !configured && k->result_expectation ? measured(p->result, k->result_expectation) : 0;
        double expected = configured ? configured
                          : from_hardware
                                  ? from_hardware
                                  : history_baseline(ps->history, p->peer_id, k->name, p->params, k->metric);
        double value = measured(p->result, k->metric);
        json_object *e = json_object_new_object();
        bool degraded;

        *status = "ok";
        json_object_object_add(e, "metric", json_object_new_string(k->metric));
        json_object_object_add(e, "value", expected ? json_object_new_double(expected) : NULL);
        json_object_object_add(e, "source",
                               json_object_new_string(configured      ? "config"
                                                      : from_hardware ? "port speed"
                                                      : expected      ? "baseline"
                                                                      : "learning"));
        json_object_object_add(e, "ratio", json_object_new_double(ps->degraded_ratio));
        json_object_object_add(out, "expected", e);
        if (degraded_by_helper(p, out, status))
                return;
        if (!expected)
                return;
        degraded = k->higher_is_better ? value < expected * ps->degraded_ratio
                                       : value > expected / ps->degraded_ratio;
        if (!degraded)
                return;
        *status = "degraded";
        {
                char m_s[32], e_s[32];
                struct log_field f[] = { { "peer", p->peer_name }, { "peer_id", p->peer_id },
                                         { "kind", k->name },      { "measured", m_s },
                                         { "expected", e_s },      { "metric", k->metric } };

                snprintf(m_s, sizeof(m_s), "%.2f", value);
                snprintf(e_s, sizeof(e_s), "%.2f", expected);
                event_emit(EVENT_PROBE_DEGRADED, f, ARRAY_SIZE(f),
                           "%s probe to %s degraded: %s %s where %s (%s) is expected", k->name, p->peer_name,
                           m_s, k->unit, e_s,
                           configured      ? "config"
                           : from_hardware ? "port speed"
                                           : "baseline");
        }
}

json_object *probe_judge(struct probe *p, const char *error)
{
        struct probes *ps = p->owner;
        json_object *out = json_object_new_object();
        const char *status = "failed";
        char started[32];
        struct tm tm;

        gmtime_r(&p->started, &tm);
        strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object_object_add(out, "id", json_object_new_string(p->id));
        json_object_object_add(out, "kind", json_object_new_string(p->kind->name));
        json_object_object_add(out, "peer", json_object_new_string(p->peer_name));
        json_object_object_add(out, "peer_id", json_object_new_string(p->peer_id));
        json_object_object_add(out, "started_at", json_object_new_string(started));
        json_object_object_add(out, "scheduled", json_object_new_boolean(p->is_scheduled));
        json_object_object_add(out, "local", json_object_new_string(p->local));
        json_object_object_add(out, "remote", json_object_new_string(p->remote));
        json_object_object_add(out, "params", json_object_get(p->params));
        json_object_object_add(out, "ok", json_object_new_boolean(!error));
        if (p->env.description)
                json_object_object_add(out, "environment", json_object_get(p->env.description));
        if (error && p->result)
                json_object_object_add(out, "detail", json_object_get(p->result));
        if (error) {
                struct log_field f[] = { { "peer", p->peer_name },
                                         { "peer_id", p->peer_id },
                                         { "kind", p->kind->name },
                                         { "phase", p->phase },
                                         { "reason", error } };

                json_object_object_add(out, "error", json_object_new_string(error));
                json_object_object_add(out, "phase", json_object_new_string(p->phase));
                /* A kind one of the two nodes cannot run (no GPU, no RDMA device) is how the
                 * cluster is built, not a fault: no alert, or every schedule would raise one. */
                if (p->is_unavailable || p->is_cancelled)
                        log_msg(LOG_NOTICE, "%s probe to %s %s: %s", p->kind->name, p->peer_name,
                                p->is_cancelled ? "cancelled" : "unavailable", error);
                else
                        event_emit(EVENT_PROBE_FAILED, f, ARRAY_SIZE(f),
                                   "%s probe to %s failed in phase %s: %s", p->kind->name, p->peer_name,
                                   p->phase, error);
        } else if (p->busy[0]) {
                /* A measure of what the job left over: neither a fault nor a baseline. */
                json_object_object_add(out, "measured", json_object_get(p->result));
                json_object_object_add(out, "fabric_busy", json_object_new_string(p->busy));
                status = "ok";
        } else {
                json_object_object_add(out, "measured", json_object_get(p->result));
                judge_expectation(ps, p, out, &status);
                probe_diagnose(p, out, &status);
        }
        if (error && p->is_unavailable)
                status = "unavailable";
        json_object_object_add(out, "status", json_object_new_string(status));
        if (!error && strcmp(status, "ok") == 0) {
                struct log_field f[] = { { "peer", p->peer_name }, { "kind", p->kind->name } };

                event_emit(EVENT_PROBE_DONE, f, ARRAY_SIZE(f), "%s probe to %s done", p->kind->name,
                           p->peer_name);
                /* Only an ok result teaches: one the diagnosis flagged must not become normal. */
                if (!ps->expect[probe_kind_index(p->kind)] && !p->busy[0])
                        history_learn(ps->history, p->peer_id, p->kind->name, p->params, p->kind->metric,
                                      measured(p->result, p->kind->metric));
        }
        history_add(ps->history, out);
        return out;
}
