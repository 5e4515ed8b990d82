/* The map from every node's table: far ends resolved to nodes and ports, links merged from both
 * ends' views (confirmed when both ends see each other), the shape classified, then the findings
 * (topology_checks.c) and the address plan (address_plan.c) added, all in a fixed order. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "address_plan.h"
#include "common/macro.h"
#include "topology_json.h"
#include "topology_model.h"

static const char *const shapes[] = { "auto", "pair", "ring", "mesh", "switch" };

bool topology_expect_shape_is_valid(const char *s)
{
        for (size_t i = 0; i < ARRAY_SIZE(shapes); i++)
                if (strcmp(s, shapes[i]) == 0)
                        return true;
        return false;
}

static int compare_nodes(const void *x, const void *y)
{
        const struct topology_node *a = *(struct topology_node *const *)x,
                                   *b = *(struct topology_node *const *)y;
        int c = strcmp(a->node_id, b->node_id);

        if (c == 0)
                c = strcmp(a->name, b->name);
        /* Two tables of one node: which one is kept must not depend on their order either. The
         * structs are zeroed before parsing, so equal contents compare equal; equal heads hold as
         * many ports (n_ports is in them), which are compared after. */
        if (c == 0)
                c = memcmp(a, b, sizeof(*a));
        return c ? c : memcmp(a->ports, b->ports, a->n_ports * sizeof(a->ports[0]));
}

/* The node a far end names: by the node id the table matched, else by chassis id (or a port's
 * MAC, which LLDP may send as the chassis id), else by system name. SIZE_MAX: none. */
static size_t find_node(const struct topology_graph *g, const struct topology_neighbour *nb)
{
        for (size_t i = 0; nb->node_id[0] && i < g->n_nodes; i++)
                if (strcmp(g->nodes[i]->node_id, nb->node_id) == 0)
                        return i;
        for (size_t i = 0; nb->chassis_id[0] && i < g->n_nodes; i++) {
                const struct topology_node *n = g->nodes[i];

                if (n->chassis_id[0] && topology_same_id(n->chassis_id, nb->chassis_id))
                        return i;
                for (size_t p = 0; p < n->n_ports; p++)
                        if (n->ports[p].mac[0] && topology_same_id(n->ports[p].mac, nb->chassis_id))
                                return i;
        }
        for (size_t i = 0; !nb->is_bridge && nb->sysname[0] && i < g->n_nodes; i++)
                if (strcmp(g->nodes[i]->name, nb->sysname) == 0 ||
                    strcmp(g->nodes[i]->chassis_name, nb->sysname) == 0)
                        return i;
        return SIZE_MAX;
}

/* The port of node n that a far end's port id or description names, or NULL. */
static const struct topology_port *find_port(const struct topology_node *n,
                                             const struct topology_neighbour *nb)
{
        for (size_t p = 0; p < n->n_ports; p++) {
                const struct topology_port *port = &n->ports[p];

                if (strcmp(nb->port_id_subtype, "mac") == 0) {
                        if (port->mac[0] && topology_same_id(port->mac, nb->port_id))
                                return port;
                } else if (nb->port_id[0] && strcmp(port->netdev, nb->port_id) == 0)
                        return port;
        }
        for (size_t p = 0; nb->port_descr[0] && p < n->n_ports; p++)
                if (strcmp(n->ports[p].netdev, nb->port_descr) == 0)
                        return &n->ports[p];
        return NULL;
}

/* What one port faces, resolved. */
struct far {
        enum topology_far kind;
        size_t node; /* TOPOLOGY_FAR_NODE */
        int rail;    /* -1: the far port is not known */
        const char *chassis;
        const char *port_id;
};

static bool is_same_link_end(const struct topology_end *e, size_t node, int rail)
{
        return e->node == node && e->rail == rail;
}

static void end_add_twin(struct topology_end *e, const struct topology_port *p)
{
        for (size_t i = 0; i < e->n_twins; i++)
                if (e->twins[i] == p)
                        return;
        if (e->n_twins < ARRAY_SIZE(e->twins))
                e->twins[e->n_twins++] = p;
}

/* How many nodes' ports face this foreign chassis: a switch when more than one, or when it says
 * it is a bridge. */
static bool is_switch(const struct topology_graph *g, const struct topology_neighbour *nb)
{
        size_t seen_by = 0;

        if (nb->is_bridge)
                return true;
        for (size_t i = 0; i < g->n_nodes; i++)
                for (size_t p = 0; p < g->nodes[i]->n_ports; p++) {
                        const struct topology_port *port = &g->nodes[i]->ports[p];

                        if (port->has_neighbour &&
                            topology_same_id(port->neighbour.chassis_id, nb->chassis_id)) {
                                if (++seen_by > 1)
                                        return true;
                                break;
                        }
                }
        return false;
}

static bool json_has_string(json_object *a, const char *s)
{
        for (size_t i = 0; i < json_object_array_length(a); i++)
                if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), s) == 0)
                        return true;
        return false;
}

/* A far end matched to a sparkd node whose table is not here: one entry per node id, with every
 * port that faces it. */
static void note_absent(struct topology_graph *g, size_t node, const struct topology_port *port)
{
        const struct topology_neighbour *nb = &port->neighbour;
        struct topology_absent *a = NULL;
        char where[2 * TOPOLOGY_NAME_MAX + 2];

        for (size_t i = 0; i < g->n_absent && !a; i++)
                if (strcmp(g->absent[i].node_id, nb->node_id) == 0)
                        a = &g->absent[i];
        if (!a) {
                if (g->n_absent >= ARRAY_SIZE(g->absent))
                        return;
                a = &g->absent[g->n_absent++];
                snprintf(a->node_id, sizeof(a->node_id), "%s", nb->node_id);
                snprintf(a->sysname, sizeof(a->sysname), "%s", nb->sysname);
                a->nodes = json_object_new_array();
                a->ports = json_object_new_array();
        }
        if (!json_has_string(a->nodes, g->nodes[node]->name))
                json_object_array_add(a->nodes, json_object_new_string(g->nodes[node]->name));
        snprintf(where, sizeof(where), "%s:%s", g->nodes[node]->name, port->netdev);
        json_object_array_add(a->ports, json_object_new_string(where));
}

static struct far resolve(struct topology_graph *g, size_t node, const struct topology_port *port)
{
        const struct topology_neighbour *nb = &port->neighbour;
        struct far f = { .kind = TOPOLOGY_FAR_OTHER,
                         .node = SIZE_MAX,
                         .rail = -1,
                         .chassis = nb->chassis_id,
                         .port_id = nb->port_id[0] ? nb->port_id : nb->port_descr };
        const struct topology_port *far_port;

        f.node = find_node(g, nb);
        if (f.node == SIZE_MAX) {
                if (nb->node_id[0]) {
                        note_absent(g, node, port);
                        return f;
                }
                f.kind = is_switch(g, nb) ? TOPOLOGY_FAR_SWITCH : TOPOLOGY_FAR_OTHER;
                return f;
        }
        f.kind = TOPOLOGY_FAR_NODE;
        far_port = find_port(g->nodes[f.node], nb);
        if (far_port)
                f.rail = far_port->rail;
        else /* The far end's own view names the rail that faces us. */
                for (size_t p = 0; p < g->nodes[f.node]->n_ports; p++) {
                        const struct topology_port *q = &g->nodes[f.node]->ports[p];
                        const struct topology_port *back;

                        if (!q->has_neighbour || find_node(g, &q->neighbour) != node)
                                continue;
                        back = find_port(g->nodes[node], &q->neighbour);
                        if (back && back->rail == port->rail) {
                                f.rail = q->rail;
                                break;
                        }
                }
        return f;
}

/* Finds the link this port's view belongs to, or makes it; ends ordered by (node, rail). */
static struct topology_link *link_for(struct topology_graph *g, size_t node,
                                      const struct topology_port *port, const struct far *f, bool *is_from_a)
{
        struct topology_end here = { .node = node, .rail = port->rail },
                            there = { .node = f->node, .rail = f->rail };
        bool is_here_first =
                f->kind != TOPOLOGY_FAR_NODE || node < f->node || (node == f->node && port->rail < f->rail);
        struct topology_link *l;

        for (size_t i = 0; i < g->n_links; i++) {
                l = &g->links[i];
                if (l->far != f->kind)
                        continue;
                if (f->kind != TOPOLOGY_FAR_NODE) {
                        if (is_same_link_end(&l->a, node, port->rail) &&
                            topology_same_id(l->far_chassis, f->chassis) &&
                            strcmp(l->far_port, f->port_id) == 0) {
                                *is_from_a = true;
                                return l;
                        }
                        continue;
                }
                if (is_same_link_end(&l->a, node, port->rail) && is_same_link_end(&l->b, f->node, f->rail)) {
                        *is_from_a = true;
                        return l;
                }
                if (is_same_link_end(&l->b, node, port->rail) && is_same_link_end(&l->a, f->node, f->rail)) {
                        *is_from_a = false;
                        return l;
                }
        }
        if (g->n_links >= g->max_links)
                return NULL;
        l = &g->links[g->n_links++];
        *l = (struct topology_link){ .far = f->kind };
        l->a = is_here_first ? here : there;
        l->b = is_here_first ? there : here;
        snprintf(l->far_chassis, sizeof(l->far_chassis), "%s", f->chassis);
        snprintf(l->far_port, sizeof(l->far_port), "%s", f->port_id);
        snprintf(l->far_name, sizeof(l->far_name), "%s",
                 port->neighbour.sysname[0] ? port->neighbour.sysname : port->neighbour.chassis_id);
        *is_from_a = is_here_first;
        return l;
}

/* A half-seen link's silent end: the ports of its rail, since its table did not name the far end. */
static void fill_silent_end(const struct topology_graph *g, struct topology_end *e)
{
        const struct topology_node *n = g->nodes[e->node];

        for (size_t p = 0; e->rail >= 0 && p < n->n_ports; p++)
                if (n->ports[p].rail == e->rail)
                        end_add_twin(e, &n->ports[p]);
}

static bool end_is_up(const struct topology_end *e)
{
        for (size_t i = 0; i < e->n_twins; i++)
                if (e->twins[i]->is_up)
                        return true;
        return false;
}

static int end_speed(const struct topology_end *e)
{
        int speed = -1;

        for (size_t i = 0; i < e->n_twins; i++)
                if (e->twins[i]->speed_mbps > speed)
                        speed = e->twins[i]->speed_mbps;
        return speed;
}

static void judge(struct topology_graph *g, struct topology_link *l, bool seen_from_a, bool seen_from_b)
{
        int speed_a = end_speed(&l->a), speed_b = -1;
        const char *a_name = g->nodes[l->a.node]->name;

        if (l->far == TOPOLOGY_FAR_NODE) {
                l->is_confirmed = seen_from_a && seen_from_b;
                speed_b = end_speed(&l->b);
        } else {
                l->is_confirmed = true; /* a switch's own view is not in the tables */
                speed_b = l->a.n_twins ? l->a.twins[0]->neighbour.speed_mbps : -1;
        }
        l->state = TOPOLOGY_LINK_OK;
        if (!end_is_up(&l->a) || (l->far == TOPOLOGY_FAR_NODE && l->b.n_twins && !end_is_up(&l->b))) {
                l->state = TOPOLOGY_LINK_DOWN;
                snprintf(l->state_why, sizeof(l->state_why), "oper state not up at %s",
                         end_is_up(&l->a) ? g->nodes[l->b.node]->name : a_name);
        } else if (!l->is_confirmed) {
                l->state = TOPOLOGY_LINK_DEGRADED;
                snprintf(l->state_why, sizeof(l->state_why), "seen from %s only",
                         seen_from_a ? a_name : g->nodes[l->b.node]->name);
        } else if ((speed_a > 0 && speed_a < g->nominal_speed_mbps) ||
                   (speed_b > 0 && speed_b < g->nominal_speed_mbps) ||
                   (speed_a > 0 && speed_b > 0 && speed_a != speed_b)) {
                l->state = TOPOLOGY_LINK_DEGRADED;
                snprintf(l->state_why, sizeof(l->state_why),
                         "%d Mb/s here, %d Mb/s at the far end, ports run %d", speed_a, speed_b,
                         g->nominal_speed_mbps);
        } else if (l->far == TOPOLOGY_FAR_NODE && l->b.n_twins && l->a.twins[0]->mtu != l->b.twins[0]->mtu) {
                l->state = TOPOLOGY_LINK_DEGRADED;
                snprintf(l->state_why, sizeof(l->state_why), "MTU %d at one end, %d at the other",
                         l->a.twins[0]->mtu, l->b.twins[0]->mtu);
        }
}

static int compare_links(const void *x, const void *y)
{
        const struct topology_link *a = x, *b = y;
        int c;

        if (a->a.node != b->a.node)
                return a->a.node < b->a.node ? -1 : 1;
        if (a->a.rail != b->a.rail)
                return a->a.rail < b->a.rail ? -1 : 1;
        if (a->far != b->far)
                return a->far < b->far ? -1 : 1;
        if (a->far == TOPOLOGY_FAR_NODE && a->b.node != b->b.node)
                return a->b.node < b->b.node ? -1 : 1;
        if (a->far == TOPOLOGY_FAR_NODE && a->b.rail != b->b.rail)
                return a->b.rail < b->b.rail ? -1 : 1;
        c = strcmp(a->far_chassis, b->far_chassis);
        return c ? c : strcmp(a->far_port, b->far_port);
}

/* Links from every port's view. seen[] records, per link, which ends saw the other. */
static int build_links(struct topology_graph *g)
{
        _cleanup_free_ bool *seen = calloc(g->max_links * 2 + 1, sizeof(bool));

        if (!seen)
                return -ENOMEM;
        for (size_t i = 0; i < g->n_nodes; i++)
                for (size_t p = 0; p < g->nodes[i]->n_ports; p++) {
                        const struct topology_port *port = &g->nodes[i]->ports[p];
                        struct topology_link *l;
                        bool is_from_a;
                        struct far f;

                        if (port->speed_mbps > g->nominal_speed_mbps)
                                g->nominal_speed_mbps = port->speed_mbps;
                        if (!port->has_neighbour)
                                continue;
                        f = resolve(g, i, port);
                        if (port->neighbour.node_id[0] && f.node == SIZE_MAX)
                                continue; /* a sparkd node whose table is missing: a finding, no link */
                        l = link_for(g, i, port, &f, &is_from_a);
                        if (!l)
                                return -E2BIG;
                        end_add_twin(is_from_a ? &l->a : &l->b, port);
                        seen[(l - g->links) * 2 + (is_from_a ? 0 : 1)] = true;
                }
        for (size_t i = 0; i < g->n_links; i++) {
                struct topology_link *l = &g->links[i];

                if (l->far == TOPOLOGY_FAR_NODE && !l->b.n_twins)
                        fill_silent_end(g, &l->b);
                if (l->far == TOPOLOGY_FAR_NODE && !l->a.n_twins)
                        fill_silent_end(g, &l->a);
                judge(g, l, seen[i * 2], seen[i * 2 + 1]);
        }
        if (g->n_links > 1) /* qsort's base must not be NULL, even for no element */
                qsort(g->links, g->n_links, sizeof(g->links[0]), compare_links);
        return 0;
}

static bool is_connected(const struct topology_graph *g)
{
        bool reached[TOPOLOGY_MAX_NODES] = { true };
        bool is_changed = true;
        size_t n = 1;

        while (is_changed) {
                is_changed = false;
                for (size_t i = 0; i < g->n_links; i++) {
                        const struct topology_link *l = &g->links[i];

                        if (l->far != TOPOLOGY_FAR_NODE || reached[l->a.node] == reached[l->b.node])
                                continue;
                        reached[l->a.node] = reached[l->b.node] = true;
                        is_changed = true;
                        n++;
                }
        }
        return n == g->n_nodes;
}

static void classify(struct topology_graph *g)
{
        bool *adjacent = g->adjacent;
        size_t node_links = 0, switch_links = 0, pairs = 0;
        const char *switch_chassis = NULL;
        bool is_one_switch = true, is_ring = true;

        g->shape = "unknown";
        for (size_t i = 0; i < g->n_links; i++) {
                const struct topology_link *l = &g->links[i];

                if (l->far == TOPOLOGY_FAR_SWITCH) {
                        switch_links++;
                        if (switch_chassis && !topology_same_id(switch_chassis, l->far_chassis))
                                is_one_switch = false;
                        switch_chassis = l->far_chassis;
                } else if (l->far == TOPOLOGY_FAR_NODE && l->a.node != l->b.node) {
                        node_links++;
                        pairs += !adjacent[l->a.node * g->n_nodes + l->b.node];
                        adjacent[l->a.node * g->n_nodes + l->b.node] = true;
                        adjacent[l->b.node * g->n_nodes + l->a.node] = true;
                }
        }
        if (g->n_nodes == 1 && node_links == 0)
                g->shape = "single";
        else if (node_links == 0 && switch_links == 0)
                g->shape = "unknown";
        else if (node_links == 0)
                g->shape = is_one_switch ? "switch" : "mixed";
        else if (switch_links || !is_connected(g))
                g->shape = "mixed";
        else if (g->n_nodes == 2)
                g->shape = "pair";
        else if (pairs == g->n_nodes * (g->n_nodes - 1) / 2 && g->n_nodes > 3)
                g->shape = "mesh";
        else {
                for (size_t i = 0; i < g->n_nodes; i++) {
                        size_t degree = 0;

                        for (size_t j = 0; j < g->n_nodes; j++)
                                degree += adjacent[i * g->n_nodes + j];
                        is_ring = is_ring && degree == 2;
                }
                g->shape = is_ring && pairs == g->n_nodes ? "ring" : "mixed";
                if (is_ring)
                        g->ring_pairs_missing = (unsigned)(g->n_nodes * (g->n_nodes - 1) / 2 - pairs);
        }
}

int topology_derive(struct topology_node *const *nodes, size_t n, const struct topology_expect *expect,
                    json_object **map)
{
        _cleanup_free_ struct topology_node **sorted = NULL;
        _cleanup_free_ struct topology_link *links = NULL;
        _cleanup_free_ struct topology_graph *g = NULL;
        _cleanup_free_ bool *adjacent = NULL;
        size_t kept = 0, max_links = 0;
        int r;

        if (n > TOPOLOGY_MAX_NODES)
                return -E2BIG;
        /* A port with a far end makes one link or joins one: never more links than ports. */
        for (size_t i = 0; i < n; i++)
                max_links += nodes[i]->n_ports;
        sorted = calloc(n ? n : 1, sizeof(*sorted));
        links = calloc(max_links + 1, sizeof(*links));
        g = calloc(1, sizeof(*g));
        if (!sorted || !links || !g)
                return -ENOMEM;
        g->max_links = max_links;
        memcpy(sorted, nodes, n * sizeof(*sorted));
        qsort(sorted, n, sizeof(*sorted), compare_nodes);
        for (size_t i = 0; i < n; i++) /* one table per node id: the first by name, then content */
                if (kept == 0 || strcmp(sorted[kept - 1]->node_id, sorted[i]->node_id) != 0)
                        sorted[kept++] = sorted[i];
        g->nodes = sorted;
        g->n_nodes = kept;
        adjacent = calloc(kept * kept + 1, sizeof(bool));
        if (!adjacent)
                return -ENOMEM;
        g->adjacent = adjacent;
        g->links = links;
        g->expect = expect;
        r = build_links(g);
        if (r < 0)
                return r;
        classify(g);
        g->findings = json_object_new_array();
        topology_checks_run(g);
        r = address_plan_assign(g);
        if (r < 0) {
                json_object_put(g->findings);
                return r;
        }
        *map = topology_json_map(g);
        return 0;
}
