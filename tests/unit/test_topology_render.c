/*
 * sparkc topology's renderers on the engine's golden maps (tests/fixtures/topology/expected/
 * NAME.map.json): the table and the dot graph against their golden text, and each node's netplan
 * file from the address plan: every link of the 3- and 4-node rings gets one subnet of its own,
 * both its ends in it, and the plan of a node is the same whichever node renders it.
 */
#include <stdlib.h>

#include "client/topology_render.h"
#include "common/macro.h"
#include "common/topology_netplan.h"
#include "golden.h"
#include "test.h"

#ifndef TOPOLOGY_FIXTURES_DIR
#error "TOPOLOGY_FIXTURES_DIR must name tests/fixtures/topology (meson passes it)"
#endif

#define EXPECTED TOPOLOGY_FIXTURES_DIR "/expected"

static json_object *golden_map(const char *name)
{
        char path[512];

        snprintf(path, sizeof(path), "%s/%s.map.json", EXPECTED, name);
        return json_object_from_file(path);
}

static void test_table_and_dot(void)
{
        static const char *const names[] = { "ring3",      "ring3-miswired", "switch4-100g",
                                             "not-sparkd", "ring4",          "ring3-missing" };

        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
                json_object *map = golden_map(names[i]);
                char *text = NULL, file[128];
                size_t size = 0;
                FILE *out;

                CHECK(map != NULL);
                out = open_memstream(&text, &size);
                CHECK(topology_render_table(out, map) == 0);
                fclose(out);
                snprintf(file, sizeof(file), "%s.txt", names[i]);
                golden_compare(EXPECTED, file, text);
                free(text);
                out = open_memstream(&text, &size);
                CHECK(topology_render_dot(out, map) == 0);
                fclose(out);
                snprintf(file, sizeof(file), "%s.dot", names[i]);
                golden_compare(EXPECTED, file, text);
                free(text);
                json_object_put(map);
        }
        {
                json_object *empty = json_object_new_object();

                CHECK(topology_render_table(stdout, empty) == -EINVAL);
                json_object_put(empty);
        }
}

/* Every link of the ring: its two ends' planned addresses in one subnet, no subnet twice. */
static char *render(json_object *map, int (*fn)(FILE *, json_object *))
{
        char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);

        CHECK(fn(out, map) == 0);
        fclose(out);
        return text;
}

static size_t count(const char *text, const char *what)
{
        size_t n = 0;

        for (const char *p = text; (p = strstr(p, what)); p += strlen(what))
                n++;
        return n;
}

/* The picture: one edge per cable with both twins in their port's box; a finding colours its
 * cables red and names itself; a node that does not report is drawn as unknown; a legend. */
static void test_dot_cables(void)
{
        json_object *map = golden_map("ring4");
        char *dot = render(map, topology_render_dot);

        CHECK(count(dot, " -- port_") == 4);
        CHECK(count(dot, "color=forestgreen, label=") == 4);
        CHECK(strstr(dot, "label=\"port 0\\nenP2p1s0f0np0\\nenp1s0f0np0\"") != NULL);
        CHECK(strstr(dot, "subgraph cluster_legend") != NULL);
        free(dot);
        json_object_put(map);
        map = golden_map("ring3-miswired");
        dot = render(map, topology_render_dot);
        CHECK(count(dot, "color=red, label=\"200G ring-wiring") == 2);
        CHECK(count(dot, "color=forestgreen, label=") == 1);
        free(dot);
        json_object_put(map);
        map = golden_map("ring3-missing");
        dot = render(map, topology_render_dot);
        CHECK(strstr(dot, "absent_spark3 [shape=box, style=\"rounded,dashed\"") != NULL);
        CHECK(count(dot, " -- absent_spark3 [color=grey50, style=dashed") == 2);
        CHECK(strstr(dot, "not-sparkd") == NULL && strstr(dot, "other_") == NULL);
        free(dot);
        json_object_put(map);
}

/* The SUBNET column: the subnet a link's ends have addresses in, the plan's only where they
 * have none, marked. */
/* A switch silent to LLDP names no port: the end is the switch alone, no dangling colon. */
static void test_table_silent_switch(void)
{
        json_object *map = golden_map("switch4-100g"),
                    *b = json_object_object_get(
                            json_object_array_get_idx(json_object_object_get(map, "links"), 0), "b");
        char *table;

        json_object_object_add(b, "port", json_object_new_string(""));
        table = render(map, topology_render_table);
        CHECK(strstr(table, " sw1:swp1 ") == NULL && strstr(table, " sw1: ") == NULL);
        CHECK(strstr(table, " sw1                        ok ") != NULL);
        free(table);
        json_object_put(map);
}

static void test_table_subnet(void)
{
        json_object *map = golden_map("ring4"),
                    *link = json_object_array_get_idx(json_object_object_get(map, "links"), 0),
                    *nodes = json_object_object_get(map, "nodes");
        const char *plan = json_object_get_string(json_object_object_get(link, "subnet"));
        char *table, planned[64];

        for (size_t i = 0; i < json_object_array_length(nodes); i++) {
                json_object *n = json_object_array_get_idx(nodes, i),
                            *ports = json_object_object_get(n, "ports");

                for (size_t p = 0; p < json_object_array_length(ports); p++) {
                        json_object *port = json_object_array_get_idx(ports, p),
                                    *a = json_object_new_array();
                        const char *end = strcmp(json_object_get_string(json_object_object_get(n, "name")),
                                                 json_object_get_string(json_object_object_get(
                                                         json_object_object_get(link, "a"), "name"))) == 0
                                                  ? "a"
                                                  : "b";
                        json_object *e = json_object_object_get(link, end),
                                    *twins = json_object_object_get(e, "twins");
                        bool is_end = strcmp(json_object_get_string(json_object_object_get(n, "name")),
                                             json_object_get_string(json_object_object_get(e, "name"))) == 0;

                        for (size_t t = 0; is_end && t < json_object_array_length(twins); t++)
                                if (strcmp(json_object_get_string(json_object_array_get_idx(twins, t)),
                                           json_object_get_string(json_object_object_get(port, "netdev"))) ==
                                            0 &&
                                    t == 0)
                                        json_object_array_add(
                                                a, json_object_new_string(end[0] == 'a' ? "10.10.1.1/24"
                                                                                        : "10.10.1.2/24"));
                        json_object_object_add(port, "addresses", a);
                }
        }
        table = render(map, topology_render_table);
        snprintf(planned, sizeof(planned), " %s ", plan);
        CHECK(strstr(table, " 10.10.1.0/24 ") != NULL);
        CHECK(strstr(table, planned) == NULL);
        CHECK(count(table, "/24* ") == 3);
        CHECK(strstr(table, "* the plan's subnet") != NULL);
        free(table);
        json_object_put(map);
}

static void check_ring_plan(const char *name, size_t n_nodes)
{
        json_object *map = golden_map(name), *links = json_object_object_get(map, "links");
        struct topology_netplan plans[4];
        char subnets[16][32], why[256];
        size_t n_subnets = 0;

        for (size_t i = 0; i < n_nodes; i++) {
                char node[32], id[64];

                snprintf(node, sizeof(node), "spark%zu", i + 1);
                CHECK(topology_netplan_node_id(map, node, id, sizeof(id), why, sizeof(why)) == 0);
                CHECK(topology_netplan_of(map, id, NULL, &plans[i], why, sizeof(why)) == 0);
                CHECK(plans[i].n_entries == 4); /* two ports, two twins each */
        }
        for (size_t l = 0; l < json_object_array_length(links); l++) {
                json_object *twins =
                        json_object_object_get(json_object_array_get_idx(links, l), "twin_subnets");

                for (size_t t = 0; t < json_object_array_length(twins); t++) {
                        const char *subnet = json_object_get_string(
                                json_object_object_get(json_object_array_get_idx(twins, t), "subnet"));
                        size_t seen = 0;

                        for (size_t s = 0; s < n_subnets; s++)
                                CHECK(strcmp(subnets[s], subnet) != 0);
                        snprintf(subnets[n_subnets++], sizeof(subnets[0]), "%s", subnet);
                        /* Exactly two addresses in the plans of all nodes fall in it. */
                        for (size_t i = 0; i < n_nodes; i++)
                                for (size_t e = 0; e < plans[i].n_entries; e++)
                                        for (size_t a = 0; a < plans[i].entries[e].n_addresses; a++)
                                                seen += strncmp(plans[i].entries[e].addresses[a], subnet,
                                                                strlen(subnet) - strlen("0/24")) == 0;
                        CHECK(seen == 2);
                }
        }
        CHECK(n_subnets == n_nodes * 2);
        json_object_put(map);
}

static void test_netplan(void)
{
        json_object *map = golden_map("ring3");
        struct topology_netplan plan;
        char why[256], id[64], *yaml;

        check_ring_plan("ring3", 3);
        check_ring_plan("ring4", 4);
        CHECK(topology_netplan_of(map, "0000000000000000000000005a002222", NULL, &plan, why, sizeof(why)) ==
              0);
        CHECK_STREQ(plan.node_id, "0000000000000000000000005a002222");
        yaml = topology_netplan_yaml(&plan);
        golden_compare(EXPECTED, "ring3-spark2.netplan.yaml", yaml);
        free(yaml);
        CHECK(topology_netplan_node_id(map, "spark9", id, sizeof(id), why, sizeof(why)) == -ENOENT);
        CHECK_STREQ(why, "node spark9 is not in the topology map (its nodes: spark1, spark2, spark3)");
        json_object_put(map);
}

int main(void)
{
        RUN(test_table_and_dot);
        RUN(test_dot_cables);
        RUN(test_table_subnet);
        RUN(test_table_silent_switch);
        RUN(test_netplan);
        return test_result();
}
