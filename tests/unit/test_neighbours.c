/* The neighbour table (daemon/fabric/neighbours.c) from links, an LLDP table and peers; the MAU
 * types' speeds; which pairs a map joins; the chassis a peer message carries. */
#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/fabric/doctor.h"
#include "daemon/fabric/neighbours.h"
#include "daemon/fabric/topology.h"
#include "daemon/fabric/topology_pairs.h"
#include "daemon/host/lldp_table.h"
#include "daemon/peers/peer_message.h"
#include "test.h"

#define ID_B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define ID_C "cccccccccccccccccccccccccccccccc"

static void test_mau_speeds(void)
{
        CHECK(lldp_mau_speed_mbps(0) == -1);
        CHECK(lldp_mau_speed_mbps(5) == 10);       /* 10BASE-T */
        CHECK(lldp_mau_speed_mbps(16) == 100);     /* 100BASE-TX full duplex */
        CHECK(lldp_mau_speed_mbps(30) == 1000);    /* 1000BASE-T full duplex */
        CHECK(lldp_mau_speed_mbps(54) == 10000);   /* 10GBASE-T */
        CHECK(lldp_mau_speed_mbps(98) == 100000);  /* 100GBASE-CR4 */
        CHECK(lldp_mau_speed_mbps(131) == 200000); /* 200GBASE-CR4 */
        CHECK(lldp_mau_speed_mbps(135) == 400000); /* 400GBASE-R */
        CHECK(lldp_mau_speed_mbps(10000) == -1);
}

static void test_status(void)
{
        struct lldp_table t = { .status = LLDP_ABSENT };
        char buf[200];

        lldp_table_status(&t, buf, sizeof(buf));
        CHECK_STREQ(buf, "absent");
        t.status = LLDP_RUNNING;
        lldp_table_status(&t, buf, sizeof(buf));
        CHECK_STREQ(buf, "running");
        t.status = LLDP_ERROR;
        snprintf(t.error, sizeof(t.error), "permission denied");
        lldp_table_status(&t, buf, sizeof(buf));
        CHECK_STREQ(buf, "error: permission denied");
}

/* Twins p0a/p0b (one physical port), p1 with an address, p2 with none. */
static json_object *fixture_links(void)
{
        return json_tokener_parse(
                "[{\"name\": \"p2\", \"mac\": \"02:00:00:00:00:02\", \"twin\": null, \"mtu\": 9000,"
                "  \"operstate\": \"up\", \"speed_mbps\": 200000, \"addresses\": []},"
                " {\"name\": \"p0b\", \"mac\": \"02:00:00:00:00:0b\", \"twin\": \"p0a\", \"mtu\": 9000,"
                "  \"operstate\": \"up\", \"speed_mbps\": null, \"addresses\": []},"
                " {\"name\": \"p0a\", \"mac\": \"02:00:00:00:00:0a\", \"twin\": \"p0b\", \"mtu\": 9000,"
                "  \"operstate\": \"up\", \"speed_mbps\": 200000, \"addresses\": [\"10.0.0.1/24\"]},"
                " {\"name\": \"p1\", \"mac\": \"02:00:00:00:00:01\", \"twin\": null, \"mtu\": 1500,"
                "  \"operstate\": \"down\", \"speed_mbps\": 100000, \"addresses\": [\"10.0.1.1/24\"]}]");
}

static json_object *fixture_peers(void)
{
        return json_tokener_parse(
                "{\"peers\": ["
                " {\"name\": \"spark2\", \"node_id\": \"" ID_B "\", \"state\": \"up\","
                "  \"chassis\": {\"id\": \"AA:BB:CC:00:00:02\", \"name\": \"lldp-spark2\"},"
                "  \"ports\": [{\"ifname\": \"q1\", \"addresses\": [\"10.0.0.2/24\"]}]},"
                " {\"name\": \"spark3\", \"node_id\": \"" ID_C "\", \"state\": \"up\", \"chassis\": null,"
                "  \"ports\": [{\"ifname\": \"q0\", \"addresses\": [\"10.0.1.3/24\"]}]}]}");
}

static json_object *port_named(json_object *section, const char *netdev)
{
        json_object *ports = json_object_object_get(section, "ports");

        for (size_t i = 0; i < json_object_array_length(ports); i++) {
                json_object *p = json_object_array_get_idx(ports, i);

                if (strcmp(json_object_get_string(json_object_object_get(p, "netdev")), netdev) == 0)
                        return p;
        }
        return NULL;
}

static const char *nb_str(json_object *port, const char *key)
{
        json_object *nb = json_object_object_get(port, "neighbour");

        return nb ? json_object_get_string(json_object_object_get(nb, key)) : NULL;
}

static void test_from_lldp(void)
{
        struct lldp_neighbour v[] = {
                { .ifname = "p0a",
                  .chassis_id = "aa:bb:cc:00:00:02",
                  .chassis_id_subtype = "mac",
                  .sysname = "other-name",
                  .port_id = "q1",
                  .port_id_subtype = "ifname",
                  .port_descr = "q1",
                  .speed_mbps = 100000 },
                { .ifname = "p1",
                  .chassis_id = "tor1-id",
                  .chassis_id_subtype = "local",
                  .sysname = "tor1",
                  .port_id = "Ethernet4",
                  .port_id_subtype = "ifname",
                  .port_descr = "swp4",
                  .speed_mbps = -1,
                  .is_bridge = true },
                { .ifname = "p2",
                  .chassis_id = "de:ad:00:00:00:03",
                  .chassis_id_subtype = "mac",
                  .sysname = "spark3",
                  .port_id = "q0",
                  .port_id_subtype = "ifname",
                  .speed_mbps = 200000 },
        };
        struct lldp_table t = { .status = LLDP_RUNNING,
                                .has_chassis = true,
                                .chassis_id = "02:00:00:00:00:0a",
                                .chassis_name = "spark1",
                                .v = v,
                                .n = 3 };
        json_object *links = fixture_links(), *peers = fixture_peers();
        json_object *s = neighbours_build(links, &t, peers), *p;

        CHECK_STREQ(json_object_get_string(json_object_object_get(s, "lldpd")), "running");
        CHECK_STREQ(
                json_object_get_string(json_object_object_get(json_object_object_get(s, "chassis"), "name")),
                "spark1");
        CHECK(json_object_array_length(json_object_object_get(s, "ports")) == 4);
        /* Name order, twins on one rail: p0a 0, p0b 0, p1 1, p2 2. */
        CHECK(json_object_get_int(json_object_object_get(port_named(s, "p0a"), "rail")) == 0);
        CHECK(json_object_get_int(json_object_object_get(port_named(s, "p0b"), "rail")) == 0);
        CHECK(json_object_get_int(json_object_object_get(port_named(s, "p1"), "rail")) == 1);
        CHECK(json_object_get_int(json_object_object_get(port_named(s, "p2"), "rail")) == 2);
        CHECK(json_object_get_int64(json_object_object_get(port_named(s, "p0b"), "speed_mbps")) == -1);
        CHECK_STREQ(json_object_get_string(json_object_object_get(port_named(s, "p0b"), "twin")), "p0a");
        CHECK_STREQ(json_object_get_string(json_object_object_get(port_named(s, "p1"), "oper")), "down");
        /* Matched by chassis id, whatever the case of its hex digits. */
        p = port_named(s, "p0a");
        CHECK_STREQ(nb_str(p, "source"), "lldp");
        CHECK_STREQ(nb_str(p, "node_id"), ID_B);
        CHECK(json_object_get_int64(json_object_object_get(json_object_object_get(p, "neighbour"),
                                                           "speed_mbps")) == 100000);
        /* A switch: no node, the bridge capability kept. */
        p = port_named(s, "p1");
        CHECK_STREQ(nb_str(p, "sysname"), "tor1");
        CHECK(nb_str(p, "node_id") == NULL);
        CHECK(json_object_get_boolean(
                json_object_object_get(json_object_object_get(p, "neighbour"), "is_bridge")));
        /* A port without an address still has its neighbour; matched by the peer's node name. */
        CHECK_STREQ(nb_str(port_named(s, "p2"), "node_id"), ID_C);
        CHECK(json_object_object_get(port_named(s, "p0b"), "neighbour") == NULL);
        json_object_put(s);
        json_object_put(links);
        json_object_put(peers);
}

static void test_from_peers(void)
{
        struct lldp_table t = { .status = LLDP_ABSENT };
        json_object *links = fixture_links(), *peers = fixture_peers(), *s, *p;

        s = neighbours_build(links, &t, peers);
        CHECK_STREQ(json_object_get_string(json_object_object_get(s, "lldpd")), "absent");
        CHECK(json_object_object_get(s, "chassis") == NULL);
        p = port_named(s, "p0a");
        CHECK_STREQ(nb_str(p, "source"), "peer");
        CHECK_STREQ(nb_str(p, "sysname"), "spark2");
        CHECK_STREQ(nb_str(p, "port_id"), "q1");
        CHECK_STREQ(nb_str(p, "chassis_id"), "AA:BB:CC:00:00:02");
        CHECK_STREQ(nb_str(port_named(s, "p1"), "node_id"), ID_C);
        /* No address, no peer to find. */
        CHECK(json_object_object_get(port_named(s, "p2"), "neighbour") == NULL);
        json_object_put(s);

        /* Two peers on one subnet: a switch or a shared segment, not one node. */
        json_object_array_add(
                json_object_object_get(peers, "peers"),
                json_tokener_parse("{\"name\": \"spark4\", \"node_id\": \"dddddddddddddddddddddddddd"
                                   "dddddd\", \"state\": \"up\", \"ports\": [{\"ifname\": \"q9\","
                                   " \"addresses\": [\"10.0.0.4/24\"]}]}"));
        s = neighbours_build(links, &t, peers);
        p = port_named(s, "p0a");
        CHECK_STREQ(nb_str(p, "source"), "peer");
        CHECK_STREQ(nb_str(p, "chassis_id"), "subnet 10.0.0.0/24");
        CHECK_STREQ(nb_str(p, "sysname"), "switch 10.0.0.0/24");
        CHECK(nb_str(p, "node_id") == NULL);
        CHECK(json_object_get_boolean(
                json_object_object_get(json_object_object_get(p, "neighbour"), "is_bridge")));
        CHECK(json_object_object_get(port_named(s, "p1"), "neighbour") != NULL);
        json_object_put(s);
        json_object_put(links);
        json_object_put(peers);
}

/* lldpd runs and hears nothing on a port the peer channel reaches a node through: the node is
 * known from the peer channel, LLDP said silent; several nodes there: a switch silent to LLDP. */
static void test_lldp_silent(void)
{
        struct lldp_table t = { .status = LLDP_RUNNING,
                                .has_chassis = true,
                                .chassis_id = "02:00:00:00:00:0a" };
        json_object *links = fixture_links(), *peers = fixture_peers(), *s, *p;

        s = neighbours_build(links, &t, peers);
        p = port_named(s, "p0a");
        CHECK_STREQ(nb_str(p, "source"), "peer");
        CHECK_STREQ(nb_str(p, "node_id"), ID_B);
        CHECK(json_object_get_boolean(
                json_object_object_get(json_object_object_get(p, "neighbour"), "lldp_silent")));
        CHECK_STREQ(nb_str(port_named(s, "p1"), "node_id"), ID_C);
        CHECK(json_object_object_get(port_named(s, "p2"), "neighbour") == NULL);
        json_object_put(s);
        json_object_array_add(
                json_object_object_get(peers, "peers"),
                json_tokener_parse("{\"name\": \"spark4\", \"node_id\": \"dddddddddddddddddddddddddd"
                                   "dddddd\", \"state\": \"up\", \"ports\": [{\"ifname\": \"q9\","
                                   " \"addresses\": [\"10.0.0.4/24\"]}]}"));
        s = neighbours_build(links, &t, peers);
        CHECK_STREQ(nb_str(port_named(s, "p0a"), "sysname"), "silent switch 10.0.0.0/24");
        json_object_put(s);
        json_object_put(links);
        json_object_put(peers);
}

/* A ring on one link-local /16, lldpd absent: both ports of the node share the subnet with three
 * peers, which is no sign of a switch; the far ends stay unknown rather than one switch. */
static void test_one_subnet_two_ports(void)
{
        struct lldp_table t = { .status = LLDP_ABSENT };
        json_object *links = json_tokener_parse("[{\"name\": \"p0\", \"twin\": null, \"operstate\": \"up\", "
                                                "\"addresses\": [\"169.254.1.1/16\"]},"
                                                " {\"name\": \"p1\", \"twin\": null, \"operstate\": \"up\", "
                                                "\"addresses\": [\"169.254.2.1/16\"]}]");
        json_object *peers = json_tokener_parse(
                "{\"peers\": ["
                " {\"name\": \"s2\", \"node_id\": \"" ID_B "\", \"state\": \"up\","
                "  \"ports\": [{\"ifname\": \"p1\", \"addresses\": [\"169.254.3.2/16\"]}]},"
                " {\"name\": \"s3\", \"node_id\": \"" ID_C "\", \"state\": \"up\","
                "  \"ports\": [{\"ifname\": \"p0\", \"addresses\": [\"169.254.4.3/16\"]}]}]}");
        json_object *s = neighbours_build(links, &t, peers);

        CHECK(json_object_object_get(port_named(s, "p0"), "neighbour") == NULL);
        CHECK(json_object_object_get(port_named(s, "p1"), "neighbour") == NULL);
        json_object_put(s);
        json_object_put(links);
        json_object_put(peers);
}

#define SILENT_NODES 8

/* Eight Sparks behind a bridge that drops LLDP, lldpd running on each, both twins of each node's
 * first port plugged in (one QSFP cable, each twin on a subnet of its own): every node's table
 * from neighbours_build, the map from them: one switch, one link per node, no finding. */
static void test_silent_switch_map(void)
{
        struct topology_node *nodes[SILENT_NODES];
        struct lldp_table t = { .status = LLDP_RUNNING };
        json_object *map = NULL;
        char why[256] = "";

        for (int i = 0; i < SILENT_NODES; i++) {
                json_object *links = json_object_new_array(), *peers = json_object_new_object(),
                            *list = json_object_new_array(), *s;
                char id[40], name[16], text[512];

                for (int k = 0; k < SILENT_NODES; k++) {
                        snprintf(text, sizeof(text),
                                 "{\"name\": \"spark%d\", \"node_id\": \"%032d\", \"state\": \"%s\","
                                 " \"ports\": [{\"ifname\": \"enp1s0f0np0\", \"addresses\": "
                                 "[\"10.20.0.%d/24\"]}, {\"ifname\": \"enP2p1s0f0np0\", \"addresses\": "
                                 "[\"10.21.0.%d/24\"]}]}",
                                 k + 1, k + 1, k == i ? "self" : "up", k + 1, k + 1);
                        json_object_array_add(list, json_tokener_parse(text));
                }
                json_object_object_add(peers, "peers", list);
                snprintf(
                        text, sizeof(text),
                        "{\"name\": \"enp1s0f0np0\", \"pci\": \"0000:01:00.0\", \"twin\": \"enP2p1s0f0np0\","
                        " \"mac\": \"02:00:00:00:%02x:01\", \"mtu\": 9000, \"operstate\": \"up\","
                        " \"speed_mbps\": 200000, \"addresses\": [\"10.20.0.%d/24\"]}",
                        i + 1, i + 1);
                json_object_array_add(links, json_tokener_parse(text));
                snprintf(
                        text, sizeof(text),
                        "{\"name\": \"enP2p1s0f0np0\", \"pci\": \"0002:01:00.0\", \"twin\": \"enp1s0f0np0\","
                        " \"mac\": \"02:00:00:00:%02x:02\", \"mtu\": 9000, \"operstate\": \"up\","
                        " \"speed_mbps\": 200000, \"addresses\": [\"10.21.0.%d/24\"]}",
                        i + 1, i + 1);
                json_object_array_add(links, json_tokener_parse(text));
                s = neighbours_build(links, &t, peers);
                /* Both twins name one switch. */
                CHECK_STREQ(nb_str(port_named(s, "enP2p1s0f0np0"), "chassis_id"), "subnet 10.20.0.0/24");
                CHECK_STREQ(nb_str(port_named(s, "enp1s0f0np0"), "chassis_id"), "subnet 10.20.0.0/24");
                snprintf(id, sizeof(id), "%032d", i + 1);
                snprintf(name, sizeof(name), "spark%d", i + 1);
                CHECK(topology_node_parse(id, name, s, &nodes[i], why, sizeof(why)) == 0);
                json_object_put(s);
                json_object_put(links);
                json_object_put(peers);
        }
        CHECK(topology_derive(nodes, SILENT_NODES, NULL, &map) == 0);
        CHECK_STREQ(json_object_get_string(json_object_object_get(map, "shape")), "switch");
        if (json_object_array_length(json_object_object_get(map, "links")) != SILENT_NODES)
                fprintf(stderr, "%s\n", json_object_to_json_string(json_object_object_get(map, "links")));
        CHECK(json_object_array_length(json_object_object_get(map, "links")) == SILENT_NODES);
        if (json_object_array_length(json_object_object_get(map, "findings")))
                fprintf(stderr, "%s\n", json_object_to_json_string(json_object_object_get(map, "findings")));
        CHECK(json_object_array_length(json_object_object_get(map, "findings")) == 0);
        json_object_put(map);
        for (int i = 0; i < SILENT_NODES; i++)
                topology_node_free(nodes[i]);
}

static void test_map_joins(void)
{
        json_object *ring = json_tokener_parse(
                "{\"links\": [{\"a\": {\"node_id\": \"n0\"}, \"b\": {\"node_id\": \"n1\"}},"
                " {\"a\": {\"node_id\": \"n1\"}, \"b\": {\"node_id\": \"n2\"}},"
                " {\"a\": {\"node_id\": \"n2\"}, \"b\": {\"node_id\": \"n3\"}},"
                " {\"a\": {\"node_id\": \"n3\"}, \"b\": {\"node_id\": \"n0\"}}]}");
        json_object *star = json_tokener_parse(
                "{\"links\": [{\"a\": {\"node_id\": \"n0\"}, \"b\": {\"switch\": \"tor1\", \"port\": "
                "\"1\"}},"
                " {\"a\": {\"node_id\": \"n1\"}, \"b\": {\"switch\": \"tor1\", \"port\": \"2\"}},"
                " {\"a\": {\"node_id\": \"n2\"}, \"b\": {\"switch\": \"tor2\", \"port\": \"1\"}}]}");

        CHECK(topology_map_joins(ring, "n0", "n1"));
        CHECK(topology_map_joins(ring, "n0", "n3"));
        CHECK(!topology_map_joins(ring, "n0", "n2"));
        CHECK(!topology_map_joins(ring, "n1", "n3"));
        CHECK(topology_map_joins(star, "n0", "n1"));
        CHECK(topology_map_joins(star, "n1", "n0"));
        CHECK(!topology_map_joins(star, "n0", "n2"));
        CHECK(!topology_map_joins(NULL, "n0", "n1"));
        json_object_put(ring);
        json_object_put(star);
}

static void test_chassis_message(void)
{
        struct peer_chassis c;
        char long_id[400];
        json_object *m;

        m = json_tokener_parse(
                "{\"type\": \"heartbeat\", \"chassis\": {\"id\": \"aa:bb\", \"name\": \"n1\"}}");
        CHECK(peer_message_read_chassis(m, &c) == 0);
        CHECK_STREQ(c.id, "aa:bb");
        CHECK_STREQ(c.name, "n1");
        json_object_put(m);
        /* From an older sparkd: none. */
        m = json_tokener_parse("{\"type\": \"heartbeat\"}");
        CHECK(peer_message_read_chassis(m, &c) == 0 && c.id[0] == '\0');
        json_object_put(m);
        m = json_tokener_parse("{\"type\": \"heartbeat\", \"chassis\": \"aa:bb\"}");
        CHECK(peer_message_read_chassis(m, &c) == -EBADMSG);
        json_object_put(m);
        m = json_tokener_parse("{\"type\": \"heartbeat\", \"chassis\": {\"name\": \"n1\"}}");
        CHECK(peer_message_read_chassis(m, &c) == -EBADMSG);
        json_object_put(m);
        memset(long_id, 'a', sizeof(long_id) - 1);
        long_id[sizeof(long_id) - 1] = '\0';
        m = json_object_new_object();
        json_object_object_add(m, "chassis", json_object_new_object());
        json_object_object_add(json_object_object_get(m, "chassis"), "id", json_object_new_string(long_id));
        CHECK(peer_message_read_chassis(m, &c) == -EBADMSG);
        json_object_put(m);
}

/* The lldpd check of the doctor for a status: its status and fix. */
static void lldpd_check(const char *status, const char *want_status, const char *want_fix)
{
        struct fabric_facts f = { 0 };
        json_object *report, *checks;
        bool is_found = false;

        f.lldpd_status = strdup(status);
        report = doctor_run(&f);
        checks = json_object_object_get(report, "checks");
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i);

                if (strcmp(json_object_get_string(json_object_object_get(c, "id")), "lldpd") != 0)
                        continue;
                is_found = true;
                CHECK_STREQ(json_object_get_string(json_object_object_get(c, "status")), want_status);
                if (want_fix)
                        CHECK_STREQ(json_object_get_string(json_object_object_get(c, "fix")), want_fix);
        }
        CHECK(is_found);
        json_object_put(report);
        fabric_facts_free(&f);
}

static void test_doctor_lldpd(void)
{
        lldpd_check("running", "ok", NULL);
        lldpd_check("absent", "warn", "systemctl enable --now lldpd");
        lldpd_check(
                "not installed: liblldpctl.so.4: cannot open shared object file: No such file or directory",
                "warn", "apt install lldpd && systemctl enable --now lldpd");
        lldpd_check("error: cannot connect to /run/lldpd.socket: Permission denied", "warn",
                    "usermod -a -G _lldpd sparkd && systemctl restart sparkd");
        lldpd_check("error: reading a port: Unable to unserialize received data", "warn",
                    "check lldpd (systemctl status lldpd; lldpcli show neighbors)");
}

int main(void)
{
        RUN(test_doctor_lldpd);
        RUN(test_mau_speeds);
        RUN(test_status);
        RUN(test_from_lldp);
        RUN(test_from_peers);
        RUN(test_lldp_silent);
        RUN(test_silent_switch_map);
        RUN(test_one_subnet_two_ports);
        RUN(test_map_joins);
        RUN(test_chassis_message);
        return test_result();
}
