/* The address plan: a subnet per link's twin pair, from a hash of its ends (see the header for
 * the scheme and why). */
#include "address_plan.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"

#define OCTETS 254 /* 169.254.1.0/24 to 169.254.254.0/24 */

static uint32_t fnv1a(const char *s)
{
        uint32_t h = 2166136261u;

        for (; *s; s++)
                h = (h ^ (uint8_t)*s) * 16777619u;
        return h;
}

/* The octet for key: its hash's, or the next free one. -E2BIG when all are taken. */
static int take_octet(bool *used, const char *key)
{
        unsigned start = fnv1a(key) % OCTETS;

        for (unsigned i = 0; i < OCTETS; i++) {
                unsigned o = (start + i) % OCTETS;

                if (!used[o]) {
                        used[o] = true;
                        return (int)o + 1;
                }
        }
        return -E2BIG;
}

static int plan_node_link(const struct topology_graph *g, struct topology_link *l, bool *used)
{
        size_t pairs = l->a.n_twins < l->b.n_twins ? l->a.n_twins : l->b.n_twins;

        for (size_t k = 0; k < pairs && k < ARRAY_SIZE(l->addresses); k++) {
                struct topology_address *t = &l->addresses[l->n_addresses];
                char key[4 * TOPOLOGY_ID_MAX];
                int octet;

                snprintf(key, sizeof(key), "%s:%d|%s:%d|%zu", g->nodes[l->a.node]->node_id, l->a.rail,
                         g->nodes[l->b.node]->node_id, l->b.rail, k);
                octet = take_octet(used, key);
                if (octet < 0)
                        return octet;
                snprintf(t->a_netdev, sizeof(t->a_netdev), "%s", l->a.twins[k]->netdev);
                snprintf(t->b_netdev, sizeof(t->b_netdev), "%s", l->b.twins[k]->netdev);
                snprintf(t->subnet, sizeof(t->subnet), "169.254.%d.0/24", octet);
                snprintf(t->a, sizeof(t->a), "169.254.%d.1/24", octet);
                snprintf(t->b, sizeof(t->b), "169.254.%d.2/24", octet);
                l->n_addresses++;
        }
        return 0;
}

/* The star's octet per switch and twin index, kept for the star's other links. */
struct star {
        const char *chassis;
        size_t twin;
        int octet;
};

static int plan_switch_link(const struct topology_graph *g, struct topology_link *l, bool *used,
                            struct star *stars, size_t *n_stars, bool *has_star_address)
{
        if (has_star_address[l->a.node])
                return 0; /* a second cable to the star would share its subnet: left to the finding */
        has_star_address[l->a.node] = true;
        for (size_t k = 0; k < l->a.n_twins && k < ARRAY_SIZE(l->addresses); k++) {
                struct topology_address *t = &l->addresses[l->n_addresses];
                int octet = -1;

                for (size_t s = 0; s < *n_stars; s++)
                        if (stars[s].twin == k && topology_same_id(stars[s].chassis, l->far_chassis))
                                octet = stars[s].octet;
                if (octet < 0) {
                        char key[2 * TOPOLOGY_ID_MAX];

                        snprintf(key, sizeof(key), "switch:%s|%zu", l->far_chassis, k);
                        octet = take_octet(used, key);
                        if (octet < 0)
                                return octet;
                        if (*n_stars < OCTETS)
                                stars[(*n_stars)++] = (struct star){ l->far_chassis, k, octet };
                }
                snprintf(t->a_netdev, sizeof(t->a_netdev), "%s", l->a.twins[k]->netdev);
                snprintf(t->subnet, sizeof(t->subnet), "169.254.%d.0/24", octet);
                snprintf(t->a, sizeof(t->a), "169.254.%d.%zu/24", octet, l->a.node + 1);
                l->n_addresses++;
        }
        return 0;
}

int address_plan_assign(struct topology_graph *g)
{
        bool used[OCTETS] = { false }, has_star_address[TOPOLOGY_MAX_NODES] = { false };
        struct star stars[OCTETS];
        size_t n_stars = 0;
        int r = 0;

        /* Stars first: a switch's subnet must not depend on which direct links exist beside it. */
        for (size_t i = 0; i < g->n_links && r == 0; i++)
                if (g->links[i].far == TOPOLOGY_FAR_SWITCH)
                        r = plan_switch_link(g, &g->links[i], used, stars, &n_stars, has_star_address);
        for (size_t i = 0; i < g->n_links && r == 0; i++)
                if (g->links[i].far == TOPOLOGY_FAR_NODE)
                        r = plan_node_link(g, &g->links[i], used);
        return r;
}
