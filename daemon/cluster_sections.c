#include "cluster_sections.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonrpc.h"

#define HOUR_USEC (3600LL * 1000000)

static const char *jstr(json_object *o, const char *key, const char *fallback)
{
        const char *s;

        return jsonrpc_param_string(o, key, &s) > 0 ? s : fallback;
}

/* A copy of o's member key when it is a number; NULL otherwise. */
static json_object *number_of(json_object *o, const char *key)
{
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) ||
            !(json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)))
                return NULL;
        return json_object_is_type(v, json_type_int) ? json_object_new_int64(json_object_get_int64(v))
                                                     : json_object_new_double(json_object_get_double(v));
}

/* The doctor says ok, warn and fail; the cluster view speaks as the probes do. */
static const char *verdict_word(const char *status)
{
        if (strcmp(status, "warn") == 0)
                return "warning";
        if (strcmp(status, "fail") == 0)
                return "failed";
        return status;
}

json_object *cluster_section_node(const char *name, const char *node_id, const char *version,
                                  const char *mode, time_t started_wall)
{
        json_object *o = json_object_new_object();
        char started[32];
        struct tm tm;

        gmtime_r(&started_wall, &tm);
        strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object_object_add(o, "name", json_object_new_string(name));
        json_object_object_add(o, "node_id", json_object_new_string(node_id));
        json_object_object_add(o, "version", json_object_new_string(version));
        json_object_object_add(o, "mode", json_object_new_string(mode));
        json_object_object_add(o, "started_at", json_object_new_string(started));
        return o;
}

json_object *cluster_section_doctor(json_object *doctor)
{
        json_object *o = json_object_new_object(), *checks = NULL, *list = json_object_new_array();

        if (!doctor) {
                json_object_object_add(o, "verdict", json_object_new_string("unknown"));
                json_object_object_add(o, "checks", list);
                return o;
        }
        json_object_object_add(o, "verdict",
                               json_object_new_string(verdict_word(jstr(doctor, "status", "?"))));
        json_object_object_get_ex(doctor, "checks", &checks);
        for (size_t i = 0; checks && i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i), *out;
                const char *status = jstr(c, "status", "?");

                if (strcmp(status, "ok") == 0)
                        continue;
                out = json_object_new_object();
                json_object_object_add(out, "id", json_object_new_string(jstr(c, "id", "?")));
                json_object_object_add(out, "status", json_object_new_string(verdict_word(status)));
                json_object_object_add(out, "summary", json_object_new_string(jstr(c, "summary", "")));
                json_object_array_add(list, out);
        }
        json_object_object_add(o, "checks", list);
        return o;
}

/* The flaps of link name in the last hour, after learning that it has flapped `flaps` times in
 * all. A link first seen brings no flaps: those before are not dated. */
static int64_t flaps_last_hour(struct cluster_flap_log *log, const char *name, int64_t flaps, int64_t now)
{
        size_t i, count = 0;

        for (i = 0; i < log->n; i++)
                if (strcmp(log->links[i].name, name) == 0)
                        break;
        if (i == log->n) {
                if (log->n == CLUSTER_FLAP_LOG_LINKS)
                        return 0;
                log->n++;
                snprintf(log->links[i].name, sizeof(log->links[i].name), "%s", name);
                log->links[i].flaps_seen = flaps;
        }
        for (int64_t k = log->links[i].flaps_seen; k < flaps; k++) {
                log->links[i].at_usec[log->links[i].next] = now;
                log->links[i].next = (log->links[i].next + 1) % CLUSTER_FLAP_LOG_SIZE;
                if (log->links[i].n < CLUSTER_FLAP_LOG_SIZE)
                        log->links[i].n++;
        }
        log->links[i].flaps_seen = flaps;
        for (size_t k = 0; k < log->links[i].n; k++)
                if (now - log->links[i].at_usec[k] < HOUR_USEC)
                        count++;
        return (int64_t)count;
}

json_object *cluster_section_links(json_object *links, struct cluster_flap_log *log, int64_t now_usec)
{
        json_object *list = json_object_new_array();

        for (size_t i = 0; links && i < json_object_array_length(links); i++) {
                json_object *l = json_object_array_get_idx(links, i), *o = json_object_new_object(), *v;
                const char *name = jstr(l, "name", "?");
                bool up = json_object_object_get_ex(l, "oper_up", &v) && json_object_get_boolean(v);
                int64_t flaps =
                        json_object_object_get_ex(l, "flaps_since_start", &v) ? json_object_get_int64(v) : 0;
                json_object *speed = number_of(l, "speed_mbps");

                json_object_object_add(o, "name", json_object_new_string(name));
                json_object_object_add(o, "oper", json_object_new_string(up ? "up" : "down"));
                json_object_object_add(o, "speed_mbps", speed ? speed : json_object_new_int(-1));
                json_object_object_add(o, "mtu", number_of(l, "mtu"));
                json_object_object_add(o, "flaps_1h",
                                       json_object_new_int64(flaps_last_hour(log, name, flaps, now_usec)));
                json_object_array_add(list, o);
        }
        return list;
}

/* The forward (to the peer) and reverse (from it) rates of a bandwidth result. */
static void add_directions(json_object *out, json_object *measured)
{
        json_object *directions = NULL, *out_gbps = NULL, *in_gbps = NULL;

        json_object_object_get_ex(measured, "directions", &directions);
        for (size_t i = 0; directions && i < json_object_array_length(directions); i++) {
                json_object *d = json_object_array_get_idx(directions, i);
                const char *direction = jstr(d, "direction", "");

                if (strcmp(direction, "forward") == 0 && !out_gbps)
                        out_gbps = number_of(d, "gbps");
                else if (strcmp(direction, "reverse") == 0 && !in_gbps)
                        in_gbps = number_of(d, "gbps");
        }
        if (!out_gbps && !directions)
                out_gbps = number_of(measured, "gbps");
        json_object_object_add(out, "gbps_out", out_gbps);
        json_object_object_add(out, "gbps_in", in_gbps);
}

static json_object *result_entry(json_object *r)
{
        json_object *o = json_object_new_object(), *measured = NULL;
        const char *kind = jstr(r, "kind", "?");

        json_object_object_get_ex(r, "measured", &measured);
        json_object_object_add(o, "peer_id", json_object_new_string(jstr(r, "peer_id", "")));
        json_object_object_add(o, "peer", json_object_new_string(jstr(r, "peer", "")));
        json_object_object_add(o, "kind", json_object_new_string(kind));
        json_object_object_add(o, "at", json_object_new_string(jstr(r, "started_at", "")));
        json_object_object_add(o, "verdict", json_object_new_string(jstr(r, "status", "?")));
        if (!measured)
                return o;
        if (strcmp(kind, "rtt") == 0)
                json_object_object_add(o, "rtt_median_us", number_of(measured, "median_us"));
        else if (strcmp(kind, "tcp") == 0 || strcmp(kind, "rdma") == 0)
                add_directions(o, measured);
        else if (strcmp(kind, "nccl") == 0)
                json_object_object_add(o, "busbw_gbytes", number_of(measured, "busbw_gbytes"));
        else if (strcmp(kind, "pathmtu") == 0)
                json_object_object_add(o, "path_mtu", number_of(measured, "path_mtu"));
        return o;
}

/* By peer, then kind: one result that changes changes one entry in place, and the section goes
 * to the peers as that entry (cluster/summary_splice.h), not as every entry after it. */
static int by_peer_and_kind(const void *a, const void *b)
{
        json_object *x = *(json_object *const *)a, *y = *(json_object *const *)b;
        int r = strcmp(jstr(x, "peer_id", ""), jstr(y, "peer_id", ""));

        return r ? r : strcmp(jstr(x, "kind", ""), jstr(y, "kind", ""));
}

json_object *cluster_section_results(json_object *latest)
{
        json_object *list = json_object_new_array();

        for (size_t i = 0; latest && i < json_object_array_length(latest) && i < CLUSTER_SECTION_MAX_RESULTS;
             i++) {
                json_object *r = json_object_array_get_idx(latest, i), *v;

                /* A collective has no one peer: it is its own section (collective_section.h). */
                if (!json_object_object_get_ex(r, "collective", &v) || !json_object_get_boolean(v))
                        json_object_array_add(list, result_entry(r));
        }
        json_object_array_sort(list, by_peer_and_kind);
        return list;
}

static void add_alert(json_object *list, const char *id, const char *status, const char *subject,
                      const char *summary, const char *since)
{
        json_object *o = json_object_new_object();

        if (json_object_array_length(list) >= CLUSTER_SECTION_MAX_ALERTS) {
                json_object_put(o);
                return;
        }
        json_object_object_add(o, "id", json_object_new_string(id));
        json_object_object_add(o, "status", json_object_new_string(status));
        json_object_object_add(o, "subject", json_object_new_string(subject));
        json_object_object_add(o, "summary", json_object_new_string(summary));
        json_object_object_add(o, "since", since ? json_object_new_string(since) : NULL);
        json_object_array_add(list, o);
}

json_object *cluster_section_probe_alerts(json_object *latest)
{
        json_object *list = json_object_new_array();

        for (size_t i = 0; latest && i < json_object_array_length(latest); i++) {
                json_object *r = json_object_array_get_idx(latest, i);
                const char *status = jstr(r, "status", "");
                char id[32], subject[96], summary[256];

                if (strcmp(status, "degraded") != 0 && strcmp(status, "failed") != 0)
                        continue;
                snprintf(id, sizeof(id), "probe-%s", status);
                snprintf(subject, sizeof(subject), "%s %s", jstr(r, "kind", "?"), jstr(r, "peer", "?"));
                snprintf(summary, sizeof(summary), "%s probe to %s %s%s%s", jstr(r, "kind", "?"),
                         jstr(r, "peer", "?"), status, jstr(r, "error", NULL) ? ": " : "",
                         jstr(r, "error", ""));
                add_alert(list, id, strcmp(status, "failed") == 0 ? "failed" : "warning", subject, summary,
                          jstr(r, "started_at", NULL));
        }
        return list;
}

json_object *cluster_section_alerts(json_object *problems, json_object *probe_alerts)
{
        json_object *list = json_object_new_array();

        for (size_t i = 0; problems && i < json_object_array_length(problems); i++) {
                json_object *p = json_object_array_get_idx(problems, i);

                add_alert(list, jstr(p, "id", "?"), verdict_word(jstr(p, "status", "?")),
                          jstr(p, "subject", "?"), jstr(p, "summary", ""), jstr(p, "since", NULL));
        }
        for (size_t i = 0; probe_alerts && i < json_object_array_length(probe_alerts) &&
                           json_object_array_length(list) < CLUSTER_SECTION_MAX_ALERTS;
             i++)
                json_object_array_add(list, json_object_get(json_object_array_get_idx(probe_alerts, i)));
        return list;
}
