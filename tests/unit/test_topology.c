/*
 * The topology engine on fixture neighbour tables (tests/fixtures/topology/NAME.json: the
 * "neighbours" section of every node, ports numbered by the daemon's own code from their PCI
 * addresses and twins, see topology_fixture.h): the shape, the links, the findings, the address plan, and
 * the same map whatever order the tables and their ports come in. Each map is also compared
 * with tests/fixtures/topology/expected/NAME.map.json, which the client's renderers are tested
 * on; UPDATE_GOLDEN=1 rewrites those (read the diff before committing it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/fabric/doctor.h"
#include "daemon/fabric/netplan_write.h"
#include "daemon/fabric/topology.h"
#include "golden.h"
#include "inventory/fabric.h"
#include "test.h"
#include "topology_fixture.h"

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

static void compare_golden_map(const char *name, json_object *map)
{
        char file[256], dir[512];

        snprintf(dir, sizeof(dir), "%s/expected", TOPOLOGY_FIXTURES_DIR);
        snprintf(file, sizeof(file), "%s.map.json", name);
        golden_compare_json(dir, file, map);
}

/* The map of name, checked to be the same in every order and against its golden file. */
static json_object *derive(const char *name, const struct topology_expect *expect)
{
        static const size_t reversed[] = { 7, 6, 5, 4, 3, 2, 1, 0 };
        json_object *map = topology_fixture_map(name, NULL, false, expect), *other;
        json_object *fixture = topology_fixture_load(name);
        size_t n = json_object_array_length(json_object_object_get(fixture, "tables"));
        size_t rotated[MAX_TABLES];

        json_object_put(fixture);
        for (size_t i = 0; i < n; i++)
                rotated[i] = (i + 1) % n;
        other = topology_fixture_map(name, reversed + (MAX_TABLES - n), true, expect);
        CHECK(json_object_equal(map, other));
        json_object_put(other);
        other = topology_fixture_map(name, rotated, false, expect);
        CHECK(strcmp(json_object_to_json_string(map), json_object_to_json_string(other)) == 0);
        json_object_put(other);
        if (!expect)
                compare_golden_map(name, map);
        return map;
}

/* A fixture cabled as its shape wants: that shape, that many links, no finding. */
static void check_clean(const char *name, const char *shape, size_t links)
{
        json_object *map = derive(name, NULL);
        char ids[512];

        CHECK_STREQ(map_string(map, "shape"), shape);
        CHECK(n_links(map) == links);
        CHECK_STREQ(finding_ids(map, ids, sizeof(ids)), "");
        json_object_put(map);
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

        check_clean("pair-2cables", "pair", 2);
}

static void test_rings(void)
{
        json_object *map;
        char ids[512];

        check_clean("ring3", "ring", 3);
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
        check_clean("mesh4", "mesh", 6);
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
        /* Without rails, each netdev is its own port in name order, whatever the table's order. */
        for (int i = 0; i < 2; i++) {
                json_object *map = NULL, *ports;

                o = json_tokener_parse(i ? "{\"ports\": [{\"netdev\": \"b\"}, {\"netdev\": \"a\"}]}"
                                         : "{\"ports\": [{\"netdev\": \"a\"}, {\"netdev\": \"b\"}]}");
                CHECK(topology_node_parse("0123", "spark1", o, &n, why, sizeof(why)) == 0);
                CHECK(topology_derive(&n, 1, NULL, &map) == 0);
                ports = json_object_object_get(
                        json_object_array_get_idx(json_object_object_get(map, "nodes"), 0), "ports");
                CHECK_STREQ(map_string(json_object_array_get_idx(ports, 1), "netdev"), "b");
                CHECK(json_object_get_int(
                              json_object_object_get(json_object_array_get_idx(ports, 1), "rail")) == 1);
                CHECK_STREQ(map_string(map, "shape"), "single");
                json_object_put(map);
                json_object_put(o);
                topology_node_free(n);
        }
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
        check = doctor_topology(topology_fixture_map("ring3-miswired", NULL, false, NULL));
        CHECK_STREQ(map_string(check, "status"), "fail");
        CHECK(strstr(map_string(check, "summary"), "ring not cabled port 0 to port 1") != NULL);
        CHECK(strstr(map_string(check, "fix"), "port 0 goes to the next node's port 1") != NULL);
        json_object_put(check);
        check = doctor_topology(topology_fixture_map("ring3", NULL, false, NULL));
        CHECK_STREQ(map_string(check, "status"), "ok");
        CHECK_STREQ(map_string(check, "summary"), "ring, 3 links, cabled as the shape wants");
        CHECK(json_object_array_length(json_object_object_get(check, "evidence")) == 4);
        json_object_put(check);
        check = doctor_topology(json_tokener_parse("{\"shape\": \"single\", \"nodes\": [{}], \"links\": [], "
                                                   "\"findings\": []}"));
        CHECK_STREQ(map_string(check, "status"), "ok");
        CHECK(strstr(map_string(check, "summary"), "no cable to another node seen yet") != NULL);
        json_object_put(check);
        check = doctor_topology(topology_fixture_map("switch4-100g", NULL, false, NULL));
        CHECK_STREQ(map_string(check, "status"), "warn");
        json_object_put(check);
}

/* spark2 of the 3-node ring writes its plan: a netdev with another address keeps it while it
 * carries traffic or while its traffic is not known; an idle one, or one already planned, is
 * written. */
#define SPARK2_ID "0000000000000000000000005a002222"

static void test_netplan_write(void)
{
        json_object *map = topology_fixture_map("ring3", NULL, false, NULL), *result = NULL, *refused;
        struct port_counter_sample samples[3] = {
                { .netdev = "enP2p1s0f0np0", .gbps = { 12.5, 3.0 }, .gbps_from_usec = 1 },
                { .netdev = "enp1s0f0np0", .gbps = { 0, 0 }, .gbps_from_usec = 1 },
                { .netdev = "enP2p1s0f1np1" }, /* no look yet */
        };
        struct fabric_facts f = { .counters = { .v = samples, .n = 3 } };
        char dir[] = "/tmp/sparkd-netplan-XXXXXX", path[64], why[256], *text;

        CHECK(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/60-sparkd-fabric.yaml", dir);
        f.addresses = calloc(4, sizeof(*f.addresses));
        f.n_addresses = 4;
        snprintf(f.addresses[0].ifname, IF_NAMESIZE, "enP2p1s0f0np0"); /* busy, another address */
        snprintf(f.addresses[0].address, 64, "10.0.0.2/24");
        snprintf(f.addresses[1].ifname, IF_NAMESIZE, "enp1s0f0np0"); /* idle, another address */
        snprintf(f.addresses[1].address, 64, "10.0.1.2/24");
        snprintf(f.addresses[2].ifname, IF_NAMESIZE, "enP2p1s0f1np1"); /* traffic unknown */
        snprintf(f.addresses[2].address, 64, "10.0.2.2/24");
        snprintf(f.addresses[3].ifname, IF_NAMESIZE, "enp1s0f1np1"); /* IPv6 only: nothing to keep */
        snprintf(f.addresses[3].address, 64, "fe80::1/64");

        /* spark2's own netdevs, as its kernel names them: the file's keys come from these. */
        f.netifs.v = calloc(4, sizeof(*f.netifs.v));
        f.netifs.n = 4;
        snprintf(f.netifs.v[0].name, IF_NAMESIZE, "enP2p1s0f0np0");
        snprintf(f.netifs.v[1].name, IF_NAMESIZE, "enP2p1s0f1np1");
        snprintf(f.netifs.v[2].name, IF_NAMESIZE, "enp1s0f0np0");
        snprintf(f.netifs.v[3].name, IF_NAMESIZE, "enp1s0f1np1");
        CHECK(netplan_write_plan(map, SPARK2_ID, &f, path, &result, why, sizeof(why)) == 0);
        CHECK_STREQ(map_string(result, "path"), path);
        refused = json_object_object_get(result, "refused");
        CHECK(json_object_array_length(refused) == 2);
        CHECK_STREQ(map_string(json_object_array_get_idx(refused, 0), "netdev"), "enP2p1s0f0np0");
        CHECK(strstr(map_string(json_object_array_get_idx(refused, 0), "why"),
                     "it has 10.0.0.2/24, not the planned 169.254.") != NULL);
        CHECK(strstr(map_string(json_object_array_get_idx(refused, 0), "why"),
                     "carries traffic (12.500 Gb/s") != NULL);
        CHECK_STREQ(map_string(json_object_array_get_idx(refused, 1), "netdev"), "enP2p1s0f1np1");
        CHECK(strstr(map_string(json_object_array_get_idx(refused, 1), "why"), "its traffic is not known") !=
              NULL);
        text = (char *)map_string(result, "yaml");
        CHECK(strstr(text, "    \"enp1s0f0np0\":\n") && strstr(text, "    \"enp1s0f1np1\":\n"));
        CHECK(!strstr(text, "enP2p1s0f0np0") && !strstr(text, "enP2p1s0f1np1"));
        json_object_put(result);
        /* The daemon plans; it writes nothing (sparkc, run as root, does). */
        CHECK(access(path, F_OK) < 0);

        CHECK(netplan_write_plan(map, "spark2", &f, path, &result, why, sizeof(why)) ==
              -ENOENT); /* a name */
        CHECK(access(path, F_OK) < 0);
        CHECK(netplan_write_plan(map, "0000000000000000000000005a007777", &f, path, &result, why,
                                 sizeof(why)) == -ENOENT);
        CHECK(access(path, F_OK) < 0);
        rmdir(dir);
        f.counters.v = NULL;
        f.counters.n = 0;
        fabric_facts_free(&f);
        json_object_put(map);
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
        RUN(test_netplan_write);
        return test_result();
}
