/* The map's JSON from the derived graph. Nothing here decides anything: the order and the
 * values are the graph's, so that every node writes the same bytes. */
#include "topology_json.h"

#include <stdio.h>

static const char *state_name(enum topology_state s)
{
        return s == TOPOLOGY_LINK_OK ? "ok" : s == TOPOLOGY_LINK_DEGRADED ? "degraded" : "down";
}

static json_object *port_json(const struct topology_port *p)
{
        json_object *o = json_object_new_object(), *addresses = json_object_new_array();

        json_object_object_add(o, "netdev", json_object_new_string(p->netdev));
        json_object_object_add(o, "twin", json_object_new_string(p->twin));
        json_object_object_add(o, "rail", json_object_new_int(p->rail));
        json_object_object_add(o, "speed_mbps", json_object_new_int(p->speed_mbps));
        json_object_object_add(o, "mtu", json_object_new_int(p->mtu));
        json_object_object_add(o, "oper", json_object_new_string(p->oper));
        for (size_t i = 0; i < p->n_addresses; i++)
                json_object_array_add(addresses, json_object_new_string(p->addresses[i]));
        json_object_object_add(o, "addresses", addresses);
        return o;
}

static json_object *node_json(const struct topology_node *n)
{
        json_object *o = json_object_new_object(), *ports = json_object_new_array();

        json_object_object_add(o, "node_id", json_object_new_string(n->node_id));
        json_object_object_add(o, "name", json_object_new_string(n->name));
        json_object_object_add(o, "lldpd", json_object_new_string(n->lldpd));
        if (n->is_unconfirmed)
                json_object_object_add(o, "confirmed", json_object_new_boolean(false));
        for (size_t i = 0; i < n->n_ports; i++)
                json_object_array_add(ports, port_json(&n->ports[i]));
        json_object_object_add(o, "ports", ports);
        return o;
}

static json_object *end_json(const struct topology_graph *g, const struct topology_end *e)
{
        json_object *o = json_object_new_object(), *twins = json_object_new_array();
        const struct topology_node *n = g->nodes[e->node];

        json_object_object_add(o, "node_id", json_object_new_string(n->node_id));
        json_object_object_add(o, "name", json_object_new_string(n->name));
        json_object_object_add(o, "netdev", json_object_new_string(e->n_twins ? e->twins[0]->netdev : ""));
        json_object_object_add(o, "rail", json_object_new_int(e->rail));
        json_object_object_add(o, "speed_mbps",
                               json_object_new_int(e->n_twins ? e->twins[0]->speed_mbps : -1));
        json_object_object_add(o, "mtu", json_object_new_int(e->n_twins ? e->twins[0]->mtu : 0));
        for (size_t i = 0; i < e->n_twins; i++)
                json_object_array_add(twins, json_object_new_string(e->twins[i]->netdev));
        json_object_object_add(o, "twins", twins);
        return o;
}

static json_object *far_json(const struct topology_link *l)
{
        json_object *o = json_object_new_object();
        int speed = l->a.n_twins ? l->a.twins[0]->neighbour.speed_mbps : -1;

        json_object_object_add(o, l->far == TOPOLOGY_FAR_SWITCH ? "switch" : "other",
                               json_object_new_string(l->far_name));
        json_object_object_add(o, "chassis_id", json_object_new_string(l->far_chassis));
        json_object_object_add(o, "port", json_object_new_string(l->far_port));
        json_object_object_add(o, "speed_mbps", json_object_new_int(speed));
        return o;
}

static json_object *link_json(const struct topology_graph *g, const struct topology_link *l)
{
        json_object *o = json_object_new_object(), *plan = json_object_new_array();
        const char *a_name = g->nodes[l->a.node]->name;
        const char *b_name = l->far == TOPOLOGY_FAR_NODE ? g->nodes[l->b.node]->name : NULL;

        json_object_object_add(o, "a", end_json(g, &l->a));
        json_object_object_add(o, "b", l->far == TOPOLOGY_FAR_NODE ? end_json(g, &l->b) : far_json(l));
        json_object_object_add(o, "state", json_object_new_string(state_name(l->state)));
        if (l->state_why[0])
                json_object_object_add(o, "why", json_object_new_string(l->state_why));
        json_object_object_add(o, "confirmed", json_object_new_boolean(l->is_confirmed));
        for (size_t i = 0; i < l->n_addresses; i++) {
                const struct topology_address *t = &l->addresses[i];
                json_object *one = json_object_new_object(), *addresses = json_object_new_object();

                json_object_object_add(one, "a", json_object_new_string(t->a_netdev));
                json_object_object_add(one, "b", json_object_new_string(t->b_netdev));
                json_object_object_add(one, "subnet", json_object_new_string(t->subnet));
                json_object_object_add(addresses, a_name, json_object_new_string(t->a));
                if (b_name && t->b[0])
                        json_object_object_add(addresses, b_name, json_object_new_string(t->b));
                json_object_object_add(one, "addresses", addresses);
                if (i == 0) { /* the link's own subnet: its first twin pair's */
                        json_object_object_add(o, "subnet", json_object_new_string(t->subnet));
                        json_object_object_add(o, "addresses", json_object_get(addresses));
                }
                json_object_array_add(plan, one);
        }
        json_object_object_add(o, "twin_subnets", plan);
        return o;
}

json_object *topology_json_map(struct topology_graph *g)
{
        json_object *o = json_object_new_object(), *nodes = json_object_new_array(),
                    *links = json_object_new_array();

        json_object_object_add(o, "shape", json_object_new_string(g->shape));
        if (g->ring_pairs_missing)
                json_object_object_add(o, "pairs_without_link",
                                       json_object_new_int((int)g->ring_pairs_missing));
        json_object_object_add(o, "nominal_speed_mbps", json_object_new_int(g->nominal_speed_mbps));
        for (size_t i = 0; i < g->n_nodes; i++)
                json_object_array_add(nodes, node_json(g->nodes[i]));
        json_object_object_add(o, "nodes", nodes);
        for (size_t i = 0; i < g->n_links; i++)
                json_object_array_add(links, link_json(g, &g->links[i]));
        json_object_object_add(o, "links", links);
        json_object_object_add(o, "findings", g->findings);
        if (g->unconfirmed_findings)
                json_object_object_add(o, "unconfirmed_findings",
                                       json_object_new_int((int)g->unconfirmed_findings));
        g->findings = NULL;
        return o;
}
