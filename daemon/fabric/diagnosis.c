/*
 * Per rail and direction verdicts of bandwidth results, and the episodes that keep their alerts
 * to one per stale-initialization.
 */
#include "diagnosis.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "inventory/pcie.h"

const char *const diagnosis_recovery_steps[] = {
        "reboot both nodes with the final cabling in place (a software reset of the NIC does not clear "
        "it)",
        "if the rail stays capped: shut both nodes down, remove AC power for at least 60 s, reconnect "
        "without moving the QSFP cables, boot and probe again",
        "if it is still capped: collect a bug report on both nodes (nvidia-bug-report.sh, sos report) and "
        "contact NVIDIA support",
        NULL,
};

const char *diagnosis_verdict_to_string(enum diagnosis_verdict v)
{
        switch (v) {
        case DIAGNOSIS_OK:
                return "ok";
        case DIAGNOSIS_STALE_INITIALIZATION:
                return "stale-initialization";
        case DIAGNOSIS_DEGRADED:
                break;
        }
        return "degraded";
}

static const char *jstr(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : "";
}

static bool jdouble(json_object *o, const char *key, double *out)
{
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) ||
            !(json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
                return false;
        *out = json_object_get_double(v);
        return true;
}

/* What this node knows of one rail: the RDMA device and port, by netdev or device name. */
struct rail_facts {
        const struct rdma_device *device;
        int64_t ethernet_mbps; /* -1 unknown */
};

static struct rail_facts rail_facts_find(const struct fabric_facts *f, const char *name, const char *netdev)
{
        struct rail_facts rf = { .ethernet_mbps = -1 };
        const struct rdma_port *port = NULL;
        const struct netif *n;

        if (!f)
                return rf;
        port = rdma_find_port_by_netdev(&f->rdma, netdev, &rf.device);
        if (!port && (rf.device = rdma_find_device(&f->rdma, name)) && rf.device->n_ports > 0) {
                port = &rf.device->ports[0];
                netdev = port->netdev;
        }
        if (port && port->netdev_speed_mbps > 0)
                rf.ethernet_mbps = port->netdev_speed_mbps;
        else if (netdev && netdev[0] && (n = netif_list_find(&f->netifs, netdev)) && n->speed_mbps > 0)
                rf.ethernet_mbps = n->speed_mbps;
        return rf;
}

/* The rail is what the stale state looks like from the links: 200G Ethernet and a PCIe link at
 * 32 GT/s x4; everything below the healthy line is then the NIC's own initialization. */
static bool links_look_healthy(const struct rail_facts *rf)
{
        return rf->ethernet_mbps >= SPARK_RAIL_ETHERNET_MBPS && rf->device &&
               pcie_link_is_spark_trained(&rf->device->pcie);
}

/* Why the links do not say stale-initialization: "Ethernet at 100 Gb/s, PCIe 32 GT/s x2 of x4". */
static void links_text(const struct rail_facts *rf, char *buf, size_t size)
{
        char cur[32], max[32];

        if (rf->ethernet_mbps > 0)
                snprintf(buf, size, "Ethernet at %lld Gb/s", (long long)(rf->ethernet_mbps / 1000));
        else
                snprintf(buf, size, "Ethernet speed unknown");
        if (rf->device && rf->device->pcie.is_known) {
                size_t used = strlen(buf);

                snprintf(buf + used, size - used, ", PCIe at %s of %s",
                         pcie_link_format(rf->device->pcie.speed_gts, rf->device->pcie.width, cur,
                                          sizeof(cur)),
                         pcie_link_format(rf->device->pcie.max_speed_gts, rf->device->pcie.max_width, max,
                                          sizeof(max)));
        } else {
                size_t used = strlen(buf);

                snprintf(buf + used, size - used, ", PCIe link unknown");
        }
}

/* Can result show the stale initialization? RDMA writes on the rail can; TCP only with as many
 * streams as [diagnosis] stale_tcp_streams asks (0: never). why: what it lacks, for the summary. */
static bool shows_stale(json_object *result, const struct diagnosis_thresholds *t, char *why, size_t size)
{
        const char *kind = jstr(result, "kind");
        double streams = 0;

        if (strcmp(kind, "rdma") == 0)
                return true;
        if (strcmp(kind, "tcp") == 0) {
                bool has_streams = jdouble(result, "streams", &streams);

                if (t->stale_tcp_streams > 0 && has_streams && streams >= t->stale_tcp_streams)
                        return true;
                if (has_streams)
                        snprintf(why, size,
                                 "a tcp figure of %.0f stream%s cannot show the stale initialization (RDMA "
                                 "write bandwidth can: sparkc probe --kind rdma)",
                                 streams, streams == 1 ? "" : "s");
                else
                        snprintf(why, size,
                                 "a tcp figure cannot show the stale initialization (RDMA write bandwidth "
                                 "can: sparkc probe --kind rdma)");
                return false;
        }
        snprintf(why, size, "a %s figure cannot show the stale initialization (RDMA write bandwidth can)",
                 kind[0] ? kind : "bandwidth");
        return false;
}

static json_object *judge_rail(json_object *direction, const char *name, const char *netdev, double gbps,
                               const struct rail_facts rf, const struct diagnosis_thresholds *t,
                               bool can_show_stale, const char *why_not_stale,
                               enum diagnosis_verdict *verdict)
{
        const char *dir = jstr(direction, "direction"), *from = jstr(direction, "from"),
                   *to = jstr(direction, "to");
        json_object *o = json_object_new_object();
        char links[160], summary[512], pcie[32];
        bool in_band = gbps >= t->stale_min_gbps && gbps <= t->stale_max_gbps;

        links_text(&rf, links, sizeof(links));
        if (gbps >= t->healthy_gbps) {
                *verdict = DIAGNOSIS_OK;
                snprintf(summary, sizeof(summary),
                         "%s %s: %.2f Gb/s from %s to %s, at or above the healthy %g Gb/s", name, dir, gbps,
                         from, to, t->healthy_gbps);
        } else if (in_band && links_look_healthy(&rf) && can_show_stale) {
                *verdict = DIAGNOSIS_STALE_INITIALIZATION;
                snprintf(summary, sizeof(summary),
                         "%s %s: %.2f Gb/s from %s to %s while %s: the ConnectX-7 stale initialization "
                         "(no setting fixes it); reboot both nodes, then power-cycle with AC off for 60 s",
                         name, dir, gbps, from, to, links);
        } else if (in_band && links_look_healthy(&rf)) {
                *verdict = DIAGNOSIS_DEGRADED;
                snprintf(summary, sizeof(summary),
                         "%s %s: %.2f Gb/s from %s to %s, below the healthy %g Gb/s while %s; %s", name, dir,
                         gbps, from, to, t->healthy_gbps, links, why_not_stale);
        } else {
                *verdict = DIAGNOSIS_DEGRADED;
                snprintf(summary, sizeof(summary),
                         "%s %s: %.2f Gb/s from %s to %s, below the healthy %g Gb/s; %s", name, dir, gbps,
                         from, to, t->healthy_gbps, links);
        }
        json_object_object_add(o, "direction", json_object_new_string(dir));
        json_object_object_add(o, "from", json_object_new_string(from));
        json_object_object_add(o, "to", json_object_new_string(to));
        json_object_object_add(o, "rail", json_object_new_string(name));
        json_object_object_add(o, "netdev", json_object_new_string(netdev));
        json_object_object_add(o, "gbps", json_object_new_double(gbps));
        json_object_object_add(o, "verdict", json_object_new_string(diagnosis_verdict_to_string(*verdict)));
        json_object_object_add(o, "summary", json_object_new_string(summary));
        json_object_object_add(o, "ethernet_gbps",
                               rf.ethernet_mbps > 0 ? json_object_new_int64(rf.ethernet_mbps / 1000) : NULL);
        json_object_object_add(
                o, "pcie",
                rf.device && rf.device->pcie.is_known
                        ? json_object_new_string(pcie_link_format(rf.device->pcie.speed_gts,
                                                                  rf.device->pcie.width, pcie, sizeof(pcie)))
                        : NULL);
        json_object_object_add(o, "pcie_max",
                               rf.device && rf.device->pcie.is_known
                                       ? json_object_new_string(pcie_link_format(
                                                 rf.device->pcie.max_speed_gts, rf.device->pcie.max_width,
                                                 pcie, sizeof(pcie)))
                                       : NULL);
        return o;
}

/* The worse of two verdicts: stale-initialization names the cause, so it outranks degraded. */
static enum diagnosis_verdict worse(enum diagnosis_verdict a, enum diagnosis_verdict b)
{
        return a > b ? a : b;
}

json_object *diagnosis_classify(json_object *result, const struct fabric_facts *facts,
                                const struct diagnosis_thresholds *t)
{
        json_object *directions, *out, *rails;
        enum diagnosis_verdict overall = DIAGNOSIS_OK;
        size_t n_ok = 0, n_stale = 0, n_degraded = 0;
        const char *first_bad = NULL;
        char summary[640], why_not_stale[200] = "";
        bool can_show_stale;

        if (!result || !json_object_object_get_ex(result, "directions", &directions) ||
            !json_object_is_type(directions, json_type_array) || json_object_array_length(directions) == 0)
                return NULL;
        can_show_stale = shows_stale(result, t, why_not_stale, sizeof(why_not_stale));
        out = json_object_new_object();
        rails = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(directions); i++) {
                json_object *d = json_object_array_get_idx(directions, i), *dr = NULL;
                size_t n_rails;
                double gbps;

                if (json_object_object_get_ex(d, "rails", &dr) && !json_object_is_type(dr, json_type_array))
                        dr = NULL;
                n_rails = dr ? json_object_array_length(dr) : 0;
                for (size_t k = 0; k < n_rails; k++) {
                        json_object *r = json_object_array_get_idx(dr, k), *j;
                        const char *name = jstr(r, "name"), *netdev = jstr(r, "netdev");
                        struct rail_facts rf = rail_facts_find(facts, name, netdev);
                        enum diagnosis_verdict v;

                        /* Only the rails of this node's RDMA inventory have a healthy line: a
                         * management port or a virtual link is no rail. */
                        if (!rf.device || !jdouble(r, "gbps", &gbps))
                                continue;
                        j = judge_rail(d, name[0] ? name : netdev, netdev, gbps, rf, t, can_show_stale,
                                       why_not_stale, &v);
                        json_object_array_add(rails, j);
                        n_ok += v == DIAGNOSIS_OK;
                        n_stale += v == DIAGNOSIS_STALE_INITIALIZATION;
                        n_degraded += v == DIAGNOSIS_DEGRADED;
                        if (worse(overall, v) != overall || (!first_bad && v != DIAGNOSIS_OK)) {
                                overall = worse(overall, v);
                                first_bad = json_object_get_string(json_object_object_get(j, "summary"));
                        }
                }
        }
        if (json_object_array_length(rails) == 0) {
                json_object_put(rails);
                json_object_put(out);
                return NULL;
        }
        if (overall == DIAGNOSIS_OK)
                snprintf(summary, sizeof(summary), "ok: %zu rail direction%s at or above %g Gb/s", n_ok,
                         n_ok == 1 ? "" : "s", t->healthy_gbps);
        else
                snprintf(summary, sizeof(summary), "%s: %s%s", diagnosis_verdict_to_string(overall),
                         first_bad, n_stale + n_degraded > 1 ? " (and more, see the rails)" : "");
        json_object_object_add(out, "verdict", json_object_new_string(diagnosis_verdict_to_string(overall)));
        json_object_object_add(out, "summary", json_object_new_string(summary));
        json_object_object_add(out, "healthy_gbps", json_object_new_double(t->healthy_gbps));
        json_object_object_add(out, "rails", rails);
        if (n_stale) {
                json_object *steps = json_object_new_array();

                for (const char *const *s = diagnosis_recovery_steps; *s; s++)
                        json_object_array_add(steps, json_object_new_string(*s));
                json_object_object_add(out, "recovery", steps);
        }
        return out;
}

/* ---- episodes ---- */

struct episode {
        char *key; /* "PEER\nRAIL\nDIRECTION" */
};

struct diagnosis_episodes {
        struct episode *v;
        size_t n;
};

int diagnosis_episodes_new(struct diagnosis_episodes **ret)
{
        *ret = calloc(1, sizeof(**ret));
        return *ret ? 0 : -ENOMEM;
}

void diagnosis_episodes_free(struct diagnosis_episodes *e)
{
        if (!e)
                return;
        for (size_t i = 0; i < e->n; i++)
                free(e->v[i].key);
        free(e->v);
        free(e);
}

bool diagnosis_episode_begins(struct diagnosis_episodes *e, const char *peer_id, const char *rail,
                              const char *direction, enum diagnosis_verdict verdict)
{
        _cleanup_free_ char *key = NULL;
        struct episode *v;
        size_t i;

        if (asprintf(&key, "%s\n%s\n%s", peer_id, rail, direction) < 0)
                return verdict == DIAGNOSIS_STALE_INITIALIZATION;
        for (i = 0; i < e->n && strcmp(e->v[i].key, key) != 0; i++)
                ;
        if (verdict == DIAGNOSIS_OK && i < e->n) {
                free(e->v[i].key);
                e->v[i] = e->v[--e->n];
                return false;
        }
        if (verdict != DIAGNOSIS_STALE_INITIALIZATION || i < e->n)
                return false;
        v = realloc(e->v, (e->n + 1) * sizeof(*v));
        if (!v)
                return true;
        e->v = v;
        e->v[e->n++].key = TAKE_PTR(key);
        return true;
}
