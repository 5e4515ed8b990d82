/*
 * The diagnosis of a finished bandwidth probe: this node ran the client, so the result's rails
 * are this node's, and its fabric facts (read now, under the host root) say what their links
 * are. The verdict goes into the result (and so the history and `sparkc probe`), a verdict other
 * than ok makes the result degraded, and a rail and direction entering stale-initialization
 * raises one alert until a healthy result ends the episode.
 */
#include "probe_diagnosis.h"

#include <string.h>

#include "common/macro.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"

static const char *jstr(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "";
}

static void alert_stale(struct probe *p, json_object *rail, json_object *diagnosis)
{
        json_object *recovery = NULL;
        const char *steps = "";
        struct log_field f[] = {
                { "peer", p->peer_name },           { "peer_id", p->peer_id },
                { "kind", p->kind->name },          { "rail", jstr(rail, "rail") },
                { "netdev", jstr(rail, "netdev") }, { "direction", jstr(rail, "direction") },
                { "measured", jstr(rail, "gbps") }, { "recovery", "" },
        };

        if (json_object_object_get_ex(diagnosis, "recovery", &recovery))
                steps = json_object_to_json_string_ext(recovery, JSON_C_TO_STRING_PLAIN);
        f[ARRAY_SIZE(f) - 1].value = steps;
        event_emit(EVENT_STALE_INITIALIZATION, f, ARRAY_SIZE(f), "%s probe to %s: %s", p->kind->name,
                   p->peer_name, jstr(rail, "summary"));
}

static json_object *rail_verdicts_make(struct history *history)
{
        json_object *latest = history_latest(history), *out = json_object_new_array();

        for (size_t i = 0; i < json_object_array_length(latest); i++) {
                json_object *r = json_object_array_get_idx(latest, i), *d, *o;

                if (!json_object_object_get_ex(r, "diagnosis", &d) || !d)
                        continue;
                o = json_object_new_object();
                json_object_object_add(o, "peer", json_object_new_string(jstr(r, "peer")));
                json_object_object_add(o, "kind", json_object_new_string(jstr(r, "kind")));
                json_object_object_add(o, "started_at", json_object_new_string(jstr(r, "started_at")));
                json_object_object_add(o, "diagnosis", json_object_get(d));
                json_object_array_add(out, o);
        }
        json_object_put(latest);
        return out;
}

json_object *probes_rail_verdicts(struct probes *ps)
{
        uint64_t generation = history_generation(ps->history);

        if (!ps->rail_verdicts || ps->rail_verdicts_generation != generation) {
                json_object_put(ps->rail_verdicts);
                ps->rail_verdicts = rail_verdicts_make(ps->history);
                ps->rail_verdicts_generation = generation;
        }
        return json_object_get(ps->rail_verdicts);
}

void probe_diagnose(struct probe *p, json_object *out, const char **status)
{
        struct probes *ps = p->owner;
        struct fabric_facts facts;
        bool have_facts;
        json_object *d, *rails;

        /* The peer's helper only listened: its result has no directions of its own. */
        if (!p->is_initiator || !json_object_object_get_ex(p->result, "directions", NULL))
                return;
        have_facts = ps->gather_facts && ps->gather_facts(ps->facts_userdata, &facts) == 0;
        if (!have_facts)
                log_warning("%s probe to %s: no fabric facts to judge its rails by", p->kind->name,
                            p->peer_name);
        d = diagnosis_classify(p->result, have_facts ? &facts : NULL, &ps->diagnosis);
        if (have_facts)
                fabric_facts_free(&facts);
        if (!d)
                return;
        json_object_object_add(out, "diagnosis", d);
        if (strcmp(jstr(d, "verdict"), "ok") != 0)
                *status = "degraded";
        json_object_object_get_ex(d, "rails", &rails);
        for (size_t i = 0; rails && i < json_object_array_length(rails); i++) {
                json_object *r = json_object_array_get_idx(rails, i);
                const char *v = jstr(r, "verdict");
                enum diagnosis_verdict verdict = strcmp(v, "ok") == 0 ? DIAGNOSIS_OK
                                                 : strcmp(v, "stale-initialization") == 0
                                                         ? DIAGNOSIS_STALE_INITIALIZATION
                                                         : DIAGNOSIS_DEGRADED;

                if (diagnosis_episode_begins(ps->episodes, p->peer_id, jstr(r, "rail"), jstr(r, "direction"),
                                             verdict))
                        alert_stale(p, r, d);
        }
}
