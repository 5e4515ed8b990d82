/*
 * The doctor's check of the cabling, from the topology map the cluster's neighbour tables give:
 * the shape and its links as evidence, and each wiring finding (a ring not cabled port 0 to
 * port 1, a node on another switch port, a link below its port's speed, a far end without
 * sparkd, a node or link missing, one port linked twice) as the check's status; a node missing
 * only warns, since it is that node's fault and the job plan leaves it out.
 */
#include <string.h>

#include "common/json_get.h"
#include "doctor_checks.h"

#define MAX_LINK_EVIDENCE 32

static void link_evidence(struct check *c, json_object *link)
{
        json_object *a = json_object_object_get(link, "a"), *b = json_object_object_get(link, "b");
        const char *why = json_get_string(link, "why", NULL);

        if (json_get_string(b, "name", NULL))
                evidence(c, "%s:%s <-> %s:%s %s%s%s", json_get_string(a, "name", "?"),
                         json_get_string(a, "netdev", "?"), json_get_string(b, "name", "?"),
                         json_get_string(b, "netdev", "?"), json_get_string(link, "state", "?"),
                         why ? ": " : "", why ? why : "");
        else
                evidence(c, "%s:%s <-> %s port %s %s%s%s", json_get_string(a, "name", "?"),
                         json_get_string(a, "netdev", "?"),
                         json_get_string(b, "switch", json_get_string(b, "other", "?")),
                         json_get_string(b, "port", "?"), json_get_string(link, "state", "?"),
                         why ? ": " : "", why ? why : "");
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
        evidence(c, "shape %s, %zu node%s, %zu link%s", json_get_string(f->topology, "shape", "unknown"),
                 n_nodes, n_nodes == 1 ? "" : "s", n_links, n_links == 1 ? "" : "s");
        /* Every link of a small cluster; a large one's are in `sparkc topology`. */
        for (size_t i = 0; i < n_links && i < MAX_LINK_EVIDENCE; i++)
                link_evidence(c, json_object_array_get_idx(links, i));
        if (n_links > MAX_LINK_EVIDENCE)
                evidence(c, "and %zu more links (sparkc topology)", n_links - MAX_LINK_EVIDENCE);
        for (size_t i = 0; i < n_findings; i++) {
                json_object *one = json_object_array_get_idx(findings, i);
                /* A node gone missing is that node's fault, not this one's set-up: the check warns,
                 * and the job plan leaves the missing node out by its stale summary. Failing here
                 * would leave every node that is cabled to it out of the plan too. */
                enum doctor_status s =
                        strcmp(json_get_string(one, "status", ""), "failed") == 0 &&
                                        strcmp(json_get_string(one, "id", ""), "missing-node") != 0
                                ? DOCTOR_FAIL
                                : DOCTOR_WARN;

                evidence(c, "%s: %s", json_get_string(one, "id", "?"), json_get_string(one, "summary", ""));
                if (s > status || !worst) {
                        status = s > status ? s : status;
                        worst = one;
                }
        }
        if (!worst && n_links == 0) {
                check_end(c, DOCTOR_OK, NULL,
                          "no cable to another node seen yet (LLDP through lldpd, or the peer channel): "
                          "nothing to judge");
                return;
        }
        if (!worst) {
                check_end(c, DOCTOR_OK, NULL, "%s, %zu link%s, cabled as the shape wants",
                          json_get_string(f->topology, "shape", "unknown"), n_links,
                          n_links == 1 ? "" : "s");
                return;
        }
        check_end(c, status, json_get_string(worst, "fix", ""), "%s%s",
                  json_get_string(worst, "summary", ""),
                  n_findings > 1 ? " (and more: see the evidence)" : "");
}
