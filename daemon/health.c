#include "health.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "daemon/fabric/doctor.h"

static const char *jstr(json_object *o, const char *key, const char *fallback)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : fallback;
}

static bool jbool(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

static void note(json_object *problems, const char *id, enum doctor_status status, const char *subject,
                 const char *since, const char *command, const char *fmt, ...) _printf_(7, 8);

static void note(json_object *problems, const char *id, enum doctor_status status, const char *subject,
                 const char *since, const char *command, const char *fmt, ...)
{
        json_object *p = json_object_new_object();
        char text[1024];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        str_shorten(text, HEALTH_SUMMARY_MAX);
        json_object_object_add(p, "id", json_object_new_string(id));
        json_object_object_add(p, "status", json_object_new_string(doctor_status_to_string(status)));
        json_object_object_add(p, "subject", json_object_new_string(subject));
        json_object_object_add(p, "summary", json_object_new_string(text));
        json_object_object_add(p, "since", since ? json_object_new_string(since) : NULL);
        json_object_object_add(p, "command", json_object_new_string(command));
        json_object_array_add(problems, p);
}

/* A flapping link fails the node; one that went down while sparkd watched, or drifts from the
 * config, is a warning. A link down since before sparkd started (a port without a cable) is
 * not news: the doctor judges whether any port is active. */
static void judge_links(json_object *links, json_object *problems)
{
        for (size_t i = 0; links && i < json_object_array_length(links); i++) {
                json_object *l = json_object_array_get_idx(links, i), *drift;
                const char *name = jstr(l, "name", "?"), *when = jstr(l, "last_change", NULL);

                if (jbool(l, "flapping"))
                        note(problems, "link-flapping", DOCTOR_FAIL, name, when, "sparkc links",
                             "link %s is flapping (%s changes)", name,
                             json_object_get_string(json_object_object_get(l, "flaps_since_start")));
                else if (!jbool(l, "oper_up") && !jbool(l, "keep_down") && when)
                        note(problems, "link-down", DOCTOR_WARN, name, when, "sparkc links",
                             "link %s went down at %s", name, when);
                else if (json_object_object_get_ex(l, "drift", &drift) && json_object_array_length(drift))
                        note(problems, "link-drift", DOCTOR_WARN, name, when, "sparkc links",
                             "link %s drifts from the config (%s)", name,
                             json_object_get_string(json_object_array_get_idx(drift, 0)));
        }
}

/* A rejected peer holds another cluster key: it fails; one that went down is a warning. Peers
 * still being found or dialled are not news yet. */
static void judge_peers(json_object *peers, json_object *problems)
{
        json_object *list = NULL;

        if (peers)
                json_object_object_get_ex(peers, "peers", &list);
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i), *addresses = NULL;
                const char *state = jstr(p, "state", "?"), *name = jstr(p, "name", jstr(p, "static", NULL));
                const char *since = jstr(p, "since", NULL);

                if (!name && json_object_object_get_ex(p, "addresses", &addresses) &&
                    json_object_array_length(addresses))
                        name = json_object_get_string(json_object_array_get_idx(addresses, 0));
                if (strcmp(state, "rejected") == 0)
                        /* The handshake's own error is for `sparkc peers`; one line says what it
                         * means. */
                        note(problems, "peer-rejected", DOCTOR_FAIL, name ? name : "?", since,
                             "sparkc peers", "peer %s rejected: it does not hold this cluster's key",
                             name ? name : "?");
                else if (strcmp(state, "down") == 0)
                        note(problems, "peer-down", DOCTOR_WARN, name ? name : "?", since, "sparkc peers",
                             "peer %s is down%s%s", name ? name : "?", jstr(p, "error", NULL) ? ": " : "",
                             jstr(p, "error", ""));
        }
}

static void judge_doctor(json_object *doctor, json_object *problems)
{
        json_object *checks;

        if (!doctor) {
                note(problems, "doctor", DOCTOR_WARN, "doctor", NULL, "sparkc doctor",
                     "the doctor could not read this node's facts");
                return;
        }
        if (!json_object_object_get_ex(doctor, "checks", &checks))
                return;
        /* In the doctor's order, which is the order to fix things in. */
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i);
                const char *status = jstr(c, "status", "");

                for (enum doctor_status s = DOCTOR_WARN; s <= DOCTOR_FAIL; s++)
                        if (strcmp(status, doctor_status_to_string(s)) == 0)
                                note(problems, "doctor", s, jstr(c, "id", "?"), NULL, "sparkc doctor",
                                     "%s: %s", jstr(c, "id", "?"), jstr(c, "summary", "?"));
        }
}

/* The doctor's checks that judge a measurement made earlier (the newest probe's verdict), not
 * what the node is now. */
static bool is_earlier_measurement(json_object *problem)
{
        return strcmp(jstr(problem, "id", ""), "doctor") == 0 &&
               strcmp(jstr(problem, "subject", ""), "rail-bandwidth") == 0;
}

static int severity(json_object *problem)
{
        return strcmp(jstr(problem, "status", ""), doctor_status_to_string(DOCTOR_FAIL)) == 0 ? 2 : 1;
}

/* What the line leads with: a fact of now before a verdict on an earlier measurement, then the
 * worse status. A link down now leads over a failing probe verdict from before it went down. */
static int rank(json_object *problem)
{
        return (is_earlier_measurement(problem) ? 0 : 10) + severity(problem);
}

json_object *health_problems(json_object *links, json_object *peers)
{
        json_object *problems = json_object_new_array();

        judge_links(links, problems);
        judge_peers(peers, problems);
        return problems;
}

json_object *health_build(json_object *links, json_object *peers, json_object *doctor)
{
        json_object *problems = health_problems(links, peers), *worst = NULL;
        json_object *o = json_object_new_object();
        const char *status = doctor_status_to_string(DOCTOR_OK);

        judge_doctor(doctor, problems);
        /* The status is the worst of all; the line leads with the worst fact of now (links, peers,
         * the doctor's checks of the node as it is) before an earlier measurement's verdict, and
         * among equals with the first noted: what happens now before what the doctor finds. */
        for (size_t i = 0; i < json_object_array_length(problems); i++) {
                json_object *p = json_object_array_get_idx(problems, i);

                if (!worst || rank(p) > rank(worst))
                        worst = p;
                if (severity(p) == 2)
                        status = doctor_status_to_string(DOCTOR_FAIL);
                else if (strcmp(status, doctor_status_to_string(DOCTOR_OK)) == 0)
                        status = doctor_status_to_string(DOCTOR_WARN);
        }
        json_object_object_add(o, "status", json_object_new_string(status));
        json_object_object_add(o, "first_problem",
                               worst ? json_object_new_string(jstr(worst, "summary", "")) : NULL);
        json_object_object_add(o, "command",
                               worst ? json_object_new_string(jstr(worst, "command", "")) : NULL);
        json_object_put(problems);
        return o;
}

static json_object *health_now(struct links *links, struct peers *peers, json_object *doctor)
{
        json_object *list = links ? links_to_json(links) : NULL, *o;
        json_object *peer_list = peers ? peers_to_json(peers) : NULL;

        o = health_build(list, peer_list, doctor);
        json_object_put(list);
        json_object_put(peer_list);
        return o;
}

void health_kept_clear(struct health_kept *kept)
{
        json_object_put(kept->line);
        *kept = (struct health_kept){ 0 };
}

json_object *health_of_node(struct health_kept *kept, struct links *links, struct peers *peers,
                            const struct fabric_api_context *fabric)
{
        json_object *doctor = fabric ? fabric_api_doctor_kept(fabric) : NULL, *o;
        uint64_t generation = fabric && fabric->keep ? doctor_keep_generation(fabric->keep) : 0;

        if (kept && kept->line && generation && generation == kept->generation) {
                json_object_put(doctor);
                return json_object_get(kept->line);
        }
        o = health_now(links, peers, doctor);
        json_object_put(doctor);
        if (!kept || !generation)
                return o;
        json_object_put(kept->line);
        kept->line = json_object_get(o);
        kept->generation = generation;
        return o;
}
