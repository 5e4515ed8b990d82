/*
 * The topology engine on fixture neighbour tables (tests/fixtures/topology/NAME.json: the
 * "neighbours" section of every node): the shape, the links, the findings, the address plan, and
 * the same map whatever order the tables and their ports come in. Each map is also compared
 * with tests/fixtures/topology/expected/NAME.map.json, which the client's renderers are tested
 * on; UPDATE_GOLDEN=1 rewrites those (read the diff before committing it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/macro.h"
#include "daemon/fabric/doctor.h"
#include "daemon/fabric/topology.h"
#include "inventory/fabric.h"
#include "test.h"

#ifndef TOPOLOGY_FIXTURES_DIR
#error "TOPOLOGY_FIXTURES_DIR must name tests/fixtures/topology (meson passes it)"
#endif

#define MAX_TABLES 8

static json_object *load_fixture(const char *name)
{
        char path[512];

        snprintf(path, sizeof(path), "%s/%s.json", TOPOLOGY_FIXTURES_DIR, name);
        return json_object_from_file(path);
}

/* Reverses a json array in place (a new order of the same elements). */
static void reverse_array(json_object *a)
{
        size_t n = json_object_array_length(a);
        json_object *copy[64];

        for (size_t i = 0; i < n && i < 64; i++)
                copy[i] = json_object_get(json_object_array_get_idx(a, i));
        for (size_t i = 0; i < n && i < 64; i++)
                json_object_array_put_idx(a, i, copy[n - 1 - i]);
}

/* The map of fixture name, its tables taken in the order `order` gives (NULL: as written), each
 * table's ports reversed when is_ports_reversed. */
static json_object *derive_ordered(const char *name, const size_t *order, bool is_ports_reversed,
                                   const struct topology_expect *expect)
{
        struct topology_node *nodes[MAX_TABLES] = { NULL };
        json_object *fixture = load_fixture(name), *tables, *map = NULL;
        size_t n;
        int r;

        CHECK(fixture != NULL);
        if (!fixture)
                return NULL;
        tables = json_object_object_get(fixture, "tables");
        n = json_object_array_length(tables);
        for (size_t i = 0; i < n && i < MAX_TABLES; i++) {
                json_object *t = json_object_array_get_idx(tables, order ? order[i] : i);
                json_object *neighbours = json_object_object_get(t, "neighbours");
                char why[256] = "";

                if (is_ports_reversed)
                        reverse_array(json_object_object_get(neighbours, "ports"));
                r = topology_node_parse(json_object_get_string(json_object_object_get(t, "node_id")),
                                        json_object_get_string(json_object_object_get(t, "name")),
                                        neighbours, &nodes[i], why, sizeof(why));
                if (r < 0)
                        fprintf(stderr, "%s: table %zu: %s\n", name, i, why);
                CHECK(r == 0);
        }
        r = topology_derive(nodes, n, expect, &map);
        CHECK(r == 0);
        for (size_t i = 0; i < n; i++)
                topology_node_free(nodes[i]);
        json_object_put(fixture);
        return map;
}

static const char *map_string(json_object *map, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(map, key, &v) ? json_object_get_string(v) : "";
}

/* The finding ids of map, in order, comma-separated. */
static const char *finding_ids(json_object *map, char *buf, size_t size)
{
        json_object *findings = json_object_object_get(map, "findings");

        buf[0] = '\0';
        for (size_t i = 0; i < json_object_array_length(findings); i++) {
                json_object *f = json_object_array_get_idx(findings, i);

                snprintf(buf + strlen(buf), size - strlen(buf), "%s%s:%s", i ? "," : "", map_string(f, "id"),
                         map_string(f, "status"));
        }
        return buf;
}

static size_t n_links(json_object *map)
{
        return json_object_array_length(json_object_object_get(map, "links"));
}

static void compare_golden(const char *name, json_object *map)
{
        const char *text =
                json_object_to_json_string_ext(map, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED);
        char path[600], dir[512];
        json_object *expected;

        snprintf(dir, sizeof(dir), "%s/expected", TOPOLOGY_FIXTURES_DIR);
        snprintf(path, sizeof(path), "%s/%s.map.json", dir, name);
        if (getenv("UPDATE_GOLDEN")) {
                FILE *f;

                mkdir(dir, 0755);
                f = fopen(path, "we");
                fprintf(f, "%s\n", text);
                fclose(f);
                return;
        }
        expected = json_object_from_file(path);
        CHECK(expected != NULL);
        if (expected && !json_object_equal(expected, map)) {
                fprintf(stderr, "%s differs; got:\n%s\n(UPDATE_GOLDEN=1 rewrites it)\n", path, text);
                CHECK(false);
        }
        json_object_put(expected);
}

/* The map of name, checked to be the same in every order and against its golden file. */
static json_object *derive(const char *name, const struct topology_expect *expect)
{
        static const size_t reversed[] = { 7, 6, 5, 4, 3, 2, 1, 0 };
        json_object *map = derive_ordered(name, NULL, false, expect), *other;
        json_object *fixture = load_fixture(name);
        size_t n = json_object_array_length(json_object_object_get(fixture, "tables"));
        size_t rotated[MAX_TABLES];

        json_object_put(fixture);
        for (size_t i = 0; i < n; i++)
                rotated[i] = (i + 1) % n;
        other = derive_ordered(name, reversed + (MAX_TABLES - n), true, expect);
        CHECK(json_object_equal(map, other));
        json_object_put(other);
        other = derive_ordered(name, rotated, false, expect);
        CHECK(strcmp(json_object_to_json_string(map), json_object_to_json_string(other)) == 0);
        json_object_put(other);
        if (!expect)
                compare_golden(name, map);
        return map;
}

static void test_pair(void)
{
        json_object *map = derive("pair-1cable", NULL), *link, *twins;
        char ids[512];

        CHECK_STREQ(map_string(map, "shape"), "pair");
        CHECK(n_links(map) == 1);
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "");
        link = json_object_array_get_idx(json_object_object_get(map, "links"), 0);
        CHECK_STREQ(map_string(link, "state"), "ok");
        twins = json_object_object_get(json_object_object_get(link, "a"), "twins");
        CHECK(json_object_array_length(twins) == 2); /* both twins carry the cable */
        /* One subnet per twin pair, never the two twins on one. */
        CHECK(json_object_array_length(json_object_object_get(link, "twin_subnets")) == 2);
        CHECK(strcmp(map_string(json_object_array_get_idx(json_object_object_get(link, "twin_subnets"), 0),
                                "subnet"),
                     map_string(json_object_array_get_idx(json_object_object_get(link, "twin_subnets"), 1),
                                "subnet")) != 0);
        CHECK(strncmp(map_string(link, "subnet"), "169.254.", 8) == 0);
        json_object_put(map);

        map = derive("pair-2cables", NULL);
        CHECK_STREQ(map_string(map, "shape"), "pair");
        CHECK(n_links(map) == 2);
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "");
        json_object_put(map);
}

static void test_rings(void)
{
        json_object *map = derive("ring3", NULL);
        char ids[512];

        CHECK_STREQ(map_string(map, "shape"), "ring");
        CHECK(n_links(map) == 3);
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "");
        json_object_put(map);

        map = derive("ring3-miswired", NULL);
        CHECK_STREQ(map_string(map, "shape"), "ring");
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "ring-wiring:failed");
        CHECK(strstr(json_object_to_json_string(map),
                     "spark1:enP2p1s0f0np0 (port 0) <-> spark2:enP2p1s0f0np0 (port 0)"));
        json_object_put(map);

        map = derive("ring4", NULL);
        CHECK_STREQ(map_string(map, "shape"), "ring");
        CHECK(n_links(map) == 4);
        CHECK(json_object_get_int(json_object_object_get(map, "pairs_without_link")) == 2);
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "");
        json_object_put(map);
}

static void test_mesh(void)
{
        json_object *map = derive("mesh4", NULL);
        char ids[512];

        CHECK_STREQ(map_string(map, "shape"), "mesh");
        CHECK(n_links(map) == 6);
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "");
        json_object_put(map);
}

static void test_switch(void)
{
        json_object *map = derive("switch4", NULL), *links;
        char ids[512];

        CHECK_STREQ(map_string(map, "shape"), "switch");
        CHECK(n_links(map) == 4);
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "");
        /* One subnet for the star. */
        links = json_object_object_get(map, "links");
        for (size_t i = 1; i < json_object_array_length(links); i++)
                CHECK_STREQ(map_string(json_object_array_get_idx(links, i), "subnet"),
                            map_string(json_object_array_get_idx(links, 0), "subnet"));
        json_object_put(map);

        map = derive("switch4-other-port", NULL);
        CHECK_STREQ(map_string(map, "shape"), "switch");
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "switch-port:warning");
        CHECK(strstr(json_object_to_json_string(map), "spark3:enP2p1s0f1np1 (port 1)"));
        json_object_put(map);

        map = derive("switch4-100g", NULL);
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "link-speed:warning");
        CHECK(strstr(json_object_to_json_string(map), "negotiated 100 Gb\\/s on a 200 Gb\\/s port"));
        CHECK(strstr(json_object_to_json_string(map), "\"state\": \"degraded\""));
        json_object_put(map);
}

static void test_not_sparkd(void)
{
        json_object *map = derive("not-sparkd", NULL);
        char ids[512];

        CHECK_STREQ(map_string(map, "shape"), "pair");
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "not-sparkd:warning");
        CHECK(strstr(json_object_to_json_string(map), "storage1"));
        json_object_put(map);
}

static void test_missing(void)
{
        const struct topology_expect expect = { .shape = "ring", .nodes = 3 };
        json_object *map = derive("ring3-missing", NULL);
        char ids[512];

        /* spark3's table is absent: spark1 and spark2 face it, one link remains between them. */
        CHECK_STREQ(map_string(map, "shape"), "pair");
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "missing-node:failed");
        json_object_put(map);

        map = derive("ring3-missing", &expect);
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)),
                    "missing-node:failed,missing-node:failed,missing-link:failed");
        CHECK(strstr(json_object_to_json_string(map), "[cluster] nodes expects 3 nodes, the map has 2"));
        json_object_put(map);

        /* ring4 expected as a mesh: the two pairs of opposite nodes have no link. */
        map = derive("ring4", &(struct topology_expect){ .shape = "mesh" });
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "missing-link:failed");
        CHECK(strstr(json_object_to_json_string(map), "spark1 <-> spark3"));
        json_object_put(map);
}

static void test_same_twin(void)
{
        json_object *map = derive("same-twin", NULL);
        char ids[512];

        CHECK(n_links(map) == 2);
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "same-twin:warning");
        json_object_put(map);
}

static void test_malformed(void)
{
        struct topology_node *n = NULL;
        json_object *o = json_tokener_parse("{\"ports\": [{\"netdev\": 5}]}");
        char why[256] = "";

        CHECK(topology_node_parse("0123", "spark1", o, &n, why, sizeof(why)) == -EINVAL);
        CHECK_STREQ(why, "ports[0]: \"netdev\" is int, expected a string");
        json_object_put(o);
        o = json_tokener_parse("{\"ports\": [{\"netdev\": \"a\", \"rail\": 99}]}");
        CHECK(topology_node_parse("0123", "spark1", o, &n, why, sizeof(why)) == -EINVAL);
        CHECK_STREQ(why, "ports[0]: \"rail\" is 99, expected 0 to 31");
        json_object_put(o);
        CHECK(topology_expect_shape_is_valid("ring"));
        CHECK(!topology_expect_shape_is_valid("torus"));
}

/* The doctor's topology check: absent without a map (not known), failed for the miswired ring
 * with its fix, ok for the ring cabled right, each link as evidence. */
static json_object *doctor_topology(json_object *map)
{
        struct fabric_facts f = { .topology = map };
        json_object *result = doctor_run(&f), *checks = json_object_object_get(result, "checks"),
                    *found = NULL;

        for (size_t i = 0; i < json_object_array_length(checks); i++)
                if (strcmp(map_string(json_object_array_get_idx(checks, i), "id"), "topology") == 0)
                        found = json_object_get(json_object_array_get_idx(checks, i));
        json_object_put(result);
        f.topology = NULL;
        fabric_facts_free(&f);
        json_object_put(map);
        return found;
}

static void test_doctor(void)
{
        json_object *check = doctor_topology(NULL);

        CHECK(check == NULL);
        check = doctor_topology(derive_ordered("ring3-miswired", NULL, false, NULL));
        CHECK_STREQ(map_string(check, "status"), "fail");
        CHECK(strstr(map_string(check, "summary"), "ring not cabled port 0 to port 1") != NULL);
        CHECK(strstr(map_string(check, "fix"), "port 0 goes to the next node's port 1") != NULL);
        json_object_put(check);
        check = doctor_topology(derive_ordered("ring3", NULL, false, NULL));
        CHECK_STREQ(map_string(check, "status"), "ok");
        CHECK_STREQ(map_string(check, "summary"), "ring, 3 links, cabled as the shape wants");
        CHECK(json_object_array_length(json_object_object_get(check, "evidence")) == 4);
        json_object_put(check);
        check = doctor_topology(derive_ordered("switch4-100g", NULL, false, NULL));
        CHECK_STREQ(map_string(check, "status"), "warn");
        json_object_put(check);
}

int main(void)
{
        RUN(test_pair);
        RUN(test_rings);
        RUN(test_mesh);
        RUN(test_switch);
        RUN(test_not_sparkd);
        RUN(test_missing);
        RUN(test_same_twin);
        RUN(test_malformed);
        RUN(test_doctor);
        return test_result();
}
