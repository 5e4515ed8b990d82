/* The wiring findings of a derived map, each with what is wrong, where, and how to fix it: the
 * failure modes the field reports for rings (p0<->p0 cabling makes NCCL's QP setup time out,
 * since it pairs HCAs by index), switches (a port negotiated at 100G, a node cabled on its
 * other port), far ends without sparkd, nodes and links missing against [cluster], and two
 * links of one pair on one physical port. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "topology_model.h"

struct finding {
        json_object *nodes;
        json_object *ports;
};

static void finding_begin(struct finding *f)
{
        f->nodes = json_object_new_array();
        f->ports = json_object_new_array();
}

/* A finding begun and found to be nothing. */
static void finding_drop(struct finding *f)
{
        json_object_put(f->nodes);
        json_object_put(f->ports);
}

static void finding_node(struct finding *f, const char *name)
{
        for (size_t i = 0; i < json_object_array_length(f->nodes); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(f->nodes, i)), name) == 0)
                        return;
        json_object_array_add(f->nodes, json_object_new_string(name));
}

static void finding_end_port(struct finding *f, const struct topology_graph *g, const struct topology_end *e)
{
        char port[2 * TOPOLOGY_NAME_MAX + 2];

        finding_node(f, g->nodes[e->node]->name);
        if (!e->n_twins)
                return;
        snprintf(port, sizeof(port), "%s:%s", g->nodes[e->node]->name, e->twins[0]->netdev);
        json_object_array_add(f->ports, json_object_new_string(port));
}

static bool finding_on_unconfirmed_only(const struct topology_graph *g, json_object *names)
{
        size_t n = json_object_array_length(names), unconfirmed = 0;

        for (size_t i = 0; i < n; i++) {
                const char *name = json_object_get_string(json_object_array_get_idx(names, i));

                for (size_t k = 0; k < g->n_nodes; k++)
                        if (g->nodes[k]->is_unconfirmed && strcmp(g->nodes[k]->name, name) == 0) {
                                unconfirmed++;
                                break;
                        }
        }
        return n > 0 && unconfirmed == n;
}

/* The finding added, or NULL when it named unconfirmed nodes alone and was left out. */
_printf_(6, 7) static json_object *finding_end(struct topology_graph *g, struct finding *f, const char *id,
                                               const char *status, const char *fix, const char *fmt, ...)
{
        json_object *o = json_object_new_object();
        char summary[1024];
        va_list ap;

        /* What rests on unconfirmed nodes alone may be a compromised relay's invention: it
         * changes no verdict. */
        if (finding_on_unconfirmed_only(g, f->nodes)) {
                json_object_put(o);
                json_object_put(f->nodes);
                json_object_put(f->ports);
                g->unconfirmed_findings++;
                return NULL;
        }
        va_start(ap, fmt);
        vsnprintf(summary, sizeof(summary), fmt, ap);
        va_end(ap);
        json_object_object_add(o, "id", json_object_new_string(id));
        json_object_object_add(o, "status", json_object_new_string(status));
        json_object_object_add(o, "summary", json_object_new_string(summary));
        json_object_object_add(o, "fix", json_object_new_string(fix));
        json_object_object_add(o, "nodes", f->nodes);
        json_object_object_add(o, "ports", f->ports);
        json_object_array_add(g->findings, o);
        return o;
}

static const char *end_name(const struct topology_graph *g, const struct topology_end *e, char *buf,
                            size_t size)
{
        snprintf(buf, size, "%s:%s", g->nodes[e->node]->name, e->n_twins ? e->twins[0]->netdev : "?");
        return buf;
}

/* A ring works when every cable joins one node's port 0 to the next node's port 1. */
static void check_ring_wiring(struct topology_graph *g)
{
        char a[160], b[160], list[768] = "";
        struct finding f;
        size_t bad = 0;

        if (strcmp(g->shape, "ring") != 0)
                return;
        finding_begin(&f);
        for (size_t i = 0; i < g->n_links; i++) {
                const struct topology_link *l = &g->links[i];

                if (l->far != TOPOLOGY_FAR_NODE || (l->a.rail + l->b.rail == 1 && l->a.rail != l->b.rail))
                        continue;
                bad++;
                finding_end_port(&f, g, &l->a);
                finding_end_port(&f, g, &l->b);
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s (port %d) <-> %s (port %d)",
                         list[0] ? ", " : "", end_name(g, &l->a, a, sizeof(a)), l->a.rail,
                         end_name(g, &l->b, b, sizeof(b)), l->b.rail);
        }
        if (!bad) {
                finding_drop(&f);
                return;
        }
        finding_end(g, &f, "ring-wiring", "failed",
                    "recable so that each node's port 0 goes to the next node's port 1 all the way round "
                    "(NVIDIA's connect-three-sparks wiring)",
                    "ring not cabled port 0 to port 1 all the way round: %s; NCCL pairs HCAs by index and "
                    "its QP setup times out (ibv_modify_qp ... 110)",
                    list);
}

/* On a switch every node should use the same port: the one most nodes use (the lower on a tie). */
static void check_switch_port(struct topology_graph *g)
{
        unsigned per_rail[TOPOLOGY_MAX_PORTS] = { 0 };
        char a[160], list[768] = "";
        struct finding f;
        int usual = 0;

        if (strcmp(g->shape, "switch") != 0)
                return;
        for (size_t i = 0; i < g->n_links; i++)
                if (g->links[i].far == TOPOLOGY_FAR_SWITCH)
                        per_rail[g->links[i].a.rail]++;
        for (int r = 1; r < TOPOLOGY_MAX_PORTS; r++)
                if (per_rail[r] > per_rail[usual])
                        usual = r;
        finding_begin(&f);
        for (size_t i = 0; i < g->n_links; i++) {
                const struct topology_link *l = &g->links[i];

                if (l->far != TOPOLOGY_FAR_SWITCH || l->a.rail == usual)
                        continue;
                finding_end_port(&f, g, &l->a);
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s (port %d)",
                         list[0] ? ", " : "", end_name(g, &l->a, a, sizeof(a)), l->a.rail);
        }
        if (!list[0]) {
                finding_drop(&f);
                return;
        }
        finding_end(g, &f, "switch-port", "warning",
                    "cable the same port of every node to the switch (NVIDIA's multi-sparks-through-switch "
                    "wiring), or give that node its own environment (sparkc env on it)",
                    "%s on the switch through another port than the others (port %d): an environment copied "
                    "from another node names the wrong HCAs",
                    list, usual);
}

static void check_link_speed(struct topology_graph *g)
{
        for (size_t i = 0; i < g->n_links; i++) {
                const struct topology_link *l = &g->links[i];
                int here = l->a.n_twins ? l->a.twins[0]->speed_mbps : -1;
                int there = l->far == TOPOLOGY_FAR_NODE
                                    ? (l->b.n_twins ? l->b.twins[0]->speed_mbps : -1)
                                    : (l->a.n_twins ? l->a.twins[0]->neighbour.speed_mbps : -1);
                int low = here > 0 && there > 0 ? (here < there ? here : there) : here > 0 ? here : there;
                char a[160], b[160];
                struct finding f;

                if (low <= 0 || low >= g->nominal_speed_mbps)
                        continue;
                finding_begin(&f);
                finding_end_port(&f, g, &l->a);
                if (l->far == TOPOLOGY_FAR_NODE) {
                        finding_end_port(&f, g, &l->b);
                        end_name(g, &l->b, b, sizeof(b));
                } else
                        snprintf(b, sizeof(b), "%s port %s", l->far_name, l->far_port);
                finding_end(
                        g, &f, "link-speed", "warning",
                        l->far == TOPOLOGY_FAR_NODE
                                ? "reseat or replace the cable; check `ethtool` at both ends"
                                : "force the switch port to 200G (200G-baseCR4) with autonegotiation off, "
                                  "as "
                                  "NVIDIA's switch playbook does",
                        "%s <-> %s negotiated %d Gb/s on a %d Gb/s port: that link runs at a fraction of "
                        "its speed",
                        end_name(g, &l->a, a, sizeof(a)), b, low / 1000, g->nominal_speed_mbps / 1000);
        }
}

static void check_not_sparkd(struct topology_graph *g)
{
        for (size_t i = 0; i < g->n_links; i++) {
                const struct topology_link *l = &g->links[i];
                struct finding f;
                char a[160];

                if (l->far != TOPOLOGY_FAR_OTHER)
                        continue;
                finding_begin(&f);
                finding_end_port(&f, g, &l->a);
                finding_end(g, &f, "not-sparkd", "warning",
                            "install and start sparkd on that host with the cluster key, or recable the "
                            "port to a "
                            "node of the cluster",
                            "%s faces %s (chassis %s, port %s), which is not a sparkd node of this cluster",
                            end_name(g, &l->a, a, sizeof(a)), l->far_name, l->far_chassis, l->far_port);
        }
}

static void check_missing_nodes(struct topology_graph *g)
{
        struct finding f;

        for (size_t i = 0; i < g->n_absent; i++) {
                struct topology_absent *a = &g->absent[i];
                json_object *added;
                char ports[512] = "";

                f.nodes = TAKE_PTR(a->nodes);
                f.ports = TAKE_PTR(a->ports);
                for (size_t p = 0; p < json_object_array_length(f.ports); p++)
                        snprintf(ports + strlen(ports), sizeof(ports) - strlen(ports), "%s%s", p ? ", " : "",
                                 json_object_get_string(json_object_array_get_idx(f.ports, p)));
                added = finding_end(g, &f, "missing-node", "failed",
                                    "start sparkd there and check its peering with this node (sparkc status "
                                    "and sparkc peers on it); the cables are not in question",
                                    "sparkd on %s (%s) does not report (stopped, or not peered with this "
                                    "node): its end of the cables from %s is unknown",
                                    a->sysname[0] ? a->sysname : "?", a->node_id, ports);
                /* Who is absent, for a picture that draws the node as unknown. */
                if (added) {
                        json_object *absent = json_object_new_object();

                        json_object_object_add(absent, "node_id", json_object_new_string(a->node_id));
                        json_object_object_add(absent, "name", json_object_new_string(a->sysname));
                        json_object_object_add(added, "absent", absent);
                }
        }
        if (g->expect && g->expect->nodes > g->n_nodes) {
                finding_begin(&f);
                finding_end(g, &f, "missing-node", "failed",
                            "start sparkd on every node and check the peering (sparkc peers), or correct "
                            "[cluster] nodes",
                            "[cluster] nodes expects %u nodes, the map has %zu", g->expect->nodes,
                            g->n_nodes);
        }
}

static bool are_linked(const struct topology_graph *g, size_t x, size_t y)
{
        return g->adjacent[x * g->n_nodes + y];
}

static size_t node_links(const struct topology_graph *g, size_t x, enum topology_far far)
{
        size_t n = 0;

        for (size_t i = 0; i < g->n_links; i++)
                n += g->links[i].far == far &&
                     (g->links[i].a.node == x || (far == TOPOLOGY_FAR_NODE && g->links[i].b.node == x));
        return n;
}

/* Links the expected shape wants and the map lacks; links seen from one end only; nodes with no
 * link at all where LLDP runs. Where LLDP hears nothing a node's far ends come from the peer
 * channel (one peer on a port's subnet: that node; several: a switch silent to LLDP), so a
 * missing link is one neither source shows; without lldpd no link is not knowing, not a fault
 * (the lldpd check says how to know). */
static void check_missing_links(struct topology_graph *g)
{
        const char *want = g->expect && g->expect->shape ? g->expect->shape : "auto";
        char list[1024] = "", a[160];
        bool is_failed = false;
        struct finding f;

        finding_begin(&f);
        for (size_t x = 0; x < g->n_nodes; x++) {
                const char *name = g->nodes[x]->name;
                size_t peers = 0;

                for (size_t y = 0; y < g->n_nodes; y++) {
                        if (y == x || !are_linked(g, x, y)) {
                                if (y > x && strcmp(want, "mesh") == 0) {
                                        finding_node(&f, name);
                                        finding_node(&f, g->nodes[y]->name);
                                        is_failed = true;
                                        snprintf(list + strlen(list), sizeof(list) - strlen(list),
                                                 "%s%s <-> %s", list[0] ? ", " : "", name,
                                                 g->nodes[y]->name);
                                }
                                continue;
                        }
                        peers++;
                }
                if ((strcmp(want, "ring") == 0 && peers < 2) || (strcmp(want, "pair") == 0 && peers < 1) ||
                    (strcmp(want, "switch") == 0 && !node_links(g, x, TOPOLOGY_FAR_SWITCH)) ||
                    (g->n_nodes > 1 && !peers && !node_links(g, x, TOPOLOGY_FAR_SWITCH) &&
                     strcmp(g->nodes[x]->lldpd, "running") == 0)) {
                        finding_node(&f, name);
                        is_failed = true;
                        snprintf(list + strlen(list), sizeof(list) - strlen(list),
                                 "%s%s (%zu linked node%s)", list[0] ? ", " : "", name, peers,
                                 peers == 1 ? "" : "s");
                }
        }
        for (size_t i = 0; i < g->n_links; i++) {
                const struct topology_link *l = &g->links[i];

                if (l->far != TOPOLOGY_FAR_NODE || l->is_confirmed)
                        continue;
                finding_end_port(&f, g, &l->a);
                finding_end_port(&f, g, &l->b);
                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s <-> %s: %s",
                         list[0] ? ", " : "", end_name(g, &l->a, a, sizeof(a)), g->nodes[l->b.node]->name,
                         l->state_why);
        }
        if (!list[0]) {
                finding_drop(&f);
                return;
        }
        /* A link seen from one end only is often LLDP's first interval; an expected one absent is not. */
        finding_end(g, &f, "missing-link", is_failed ? "failed" : "warning",
                    "check the cables and that LLDP (lldpd) or sparkd runs at both ends; correct [cluster] "
                    "topology if the shape is meant",
                    "links missing%s%s: %s", strcmp(want, "auto") ? " for the expected " : "",
                    strcmp(want, "auto") ? want : "", list);
}

/* Two links of one pair of nodes through one physical port of either: one cable counted twice,
 * since that port's twins face two ports at the far end (the twins there are mis-grouped). */
static void check_same_twin(struct topology_graph *g)
{
        for (size_t i = 0; i < g->n_links; i++)
                for (size_t j = i + 1; j < g->n_links; j++) {
                        const struct topology_link *x = &g->links[i], *y = &g->links[j];
                        const struct topology_end *shared;
                        struct finding f;
                        char a[160];

                        if (x->far != TOPOLOGY_FAR_NODE || y->far != TOPOLOGY_FAR_NODE ||
                            x->a.node != y->a.node || x->b.node != y->b.node)
                                continue;
                        if (x->a.rail == y->a.rail)
                                shared = &x->a;
                        else if (x->b.rail == y->b.rail)
                                shared = &x->b;
                        else
                                continue;
                        finding_begin(&f);
                        finding_end_port(&f, g, &x->a);
                        finding_end_port(&f, g, &x->b);
                        finding_end_port(&f, g, &y->a);
                        finding_end_port(&f, g, &y->b);
                        finding_end(g, &f, "same-twin", "warning",
                                    "check the twins at both ends (sparkc fabric): the two netdevs of one "
                                    "physical port must share its rail; a second cable belongs on the other "
                                    "port",
                                    "%s and %s are linked twice through one physical port (%s, port %d)",
                                    g->nodes[x->a.node]->name, g->nodes[x->b.node]->name,
                                    end_name(g, shared, a, sizeof(a)), shared->rail);
                }
}

void topology_checks_run(struct topology_graph *g)
{
        check_ring_wiring(g);
        check_switch_port(g);
        check_link_speed(g);
        check_not_sparkd(g);
        check_missing_nodes(g);
        check_missing_links(g);
        check_same_twin(g);
}
