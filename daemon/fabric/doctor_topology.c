/*
 * The doctor's check of the cabling, from the topology map the cluster's neighbour tables give:
 * the shape and its links as evidence, and each wiring finding (a ring not cabled port 0 to
 * port 1, a node on another switch port, a link below its port's speed, a far end without
 * sparkd, a node or link missing, one port linked twice) as the check's status.
 */
#include <string.h>

#include "doctor_checks.h"

static const char *jstr(json_object *o, const char *key, const char *fallback)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : fallback;
}

static void link_evidence(struct check *c, json_object *link)
{
        json_object *a = json_object_object_get(link, "a"), *b = json_object_object_get(link, "b");
        const char *why = jstr(link, "why", NULL);

        if (jstr(b, "name", NULL))
                evidence(c, "%s:%s <-> %s:%s %s%s%s", jstr(a, "name", "?"), jstr(a, "netdev", "?"),
                         jstr(b, "name", "?"), jstr(b, "netdev", "?"), jstr(link, "state", "?"),
                         why ? ": " : "", why ? why : "");
        else
                evidence(c, "%s:%s <-> %s port %s %s%s%s", jstr(a, "name", "?"), jstr(a, "netdev", "?"),
                         jstr(b, "switch", jstr(b, "other", "?")), jstr(b, "port", "?"),
                         jstr(link, "state", "?"), why ? ": " : "", why ? why : "");
}

void doctor_check_topology(struct check *c, const struct fabric_facts *f)
{
        json_object *links = json_object_object_get(f->topology, "links");
        json_object *findings = json_object_object_get(f->topology, "findings");
        json_object *worst = NULL;
        enum doctor_status status = DOCTOR_OK;
        size_t n_links = links ? json_object_array_length(links) : 0;
        size_t n_findings = findings ? json_object_array_length(findings) : 0;
        size_t n_nodes = json_object_array_length(json_object_object_get(f->topology, "nodes"));

        check_begin(c, "topology");
        evidence(c, "shape %s, %zu node%s, %zu link%s", jstr(f->topology, "shape", "unknown"), n_nodes,
                 n_nodes == 1 ? "" : "s", n_links, n_links == 1 ? "" : "s");
        for (size_t i = 0; i < n_links; i++)
                link_evidence(c, json_object_array_get_idx(links, i));
        for (size_t i = 0; i < n_findings; i++) {
                json_object *one = json_object_array_get_idx(findings, i);
                enum doctor_status s =
                        strcmp(jstr(one, "status", ""), "failed") == 0 ? DOCTOR_FAIL : DOCTOR_WARN;

                evidence(c, "%s: %s", jstr(one, "id", "?"), jstr(one, "summary", ""));
                if (s > status || !worst) {
                        status = s > status ? s : status;
                        worst = one;
                }
        }
        if (!worst) {
                check_end(c, DOCTOR_OK, NULL, "%s, %zu link%s, cabled as the shape wants",
                          jstr(f->topology, "shape", "unknown"), n_links, n_links == 1 ? "" : "s");
                return;
        }
        check_end(c, status, jstr(worst, "fix", ""), "%s%s", jstr(worst, "summary", ""),
                  n_findings > 1 ? " (and more: see the evidence)" : "");
}
