/* sparkc export (and sparkd's kept files) and the gate: golden files for a pair, a switch and
 * rings of three and four, each field against the launcher's rules (CLUSTER_LINKS against those
 * of launch-cluster.sh's reader), the same bytes for the same plan, and the gate's verdict on
 * each stale file. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client/launcher_check.h"
#include "common/launcher_export.h"
#include "common/text_escape.h"
#include "golden.h"
#include "test.h"

static const char *const shapes[] = { "pair", "switch", "ring3", "ring4" };

static json_object *load(const char *shape, const char *file)
{
        char path[512];

        snprintf(path, sizeof(path), "%s/%s/%s", EXPORT_FIXTURES_DIR, shape, file);
        return json_object_from_file(path);
}

/* The plan of a fixture (with its cabling map where it has one), with edit and edit_map applied
 * to its JSON before it is read. */
static int read_plan_map(const char *shape, void (*edit)(json_object *plan, json_object *env),
                         void (*edit_map)(json_object *map), struct launcher_plan *p)
{
        json_object *plan = load(shape, "plan.json"), *env = load(shape, "env.json"),
                    *map = load(shape, "map.json");
        char why[512];
        int r;

        CHECK(plan && env);
        if (edit)
                edit(plan, env);
        if (edit_map)
                edit_map(map);
        r = launcher_plan_read(plan, env, p, why, sizeof(why));
        if (r == 0)
                r = launcher_plan_read_map(map, p, why, sizeof(why));
        json_object_put(plan);
        json_object_put(env);
        json_object_put(map);
        return r;
}

static int read_plan(const char *shape, void (*edit)(json_object *plan, json_object *env),
                     struct launcher_plan *p)
{
        return read_plan_map(shape, edit, NULL, p);
}

/* The file, or "refused: WHY" */
static char *render(const struct launcher_plan *p, enum launcher_format format, const char *name)
{
        char *text = NULL, why[512];
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        int r = format == LAUNCHER_SPARKRUN ? launcher_write_sparkrun(f, p, name, why, sizeof(why))
                                            : launcher_write_svd(f, p, why, sizeof(why));

        fclose(f);
        if (r < 0) {
                free(text);
                CHECK(r == -EINVAL);
                CHECK(asprintf(&text, "refused: %s\n", why) > 0);
        }
        return text;
}

static void test_golden(void)
{
        for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
                struct launcher_plan *p = calloc(1, sizeof(*p));
                char dir[512], *yaml, *env;

                CHECK(read_plan(shapes[i], NULL, p) == 0);
                yaml = render(p, LAUNCHER_SPARKRUN, "lab");
                env = render(p, LAUNCHER_SVD, NULL);
                snprintf(dir, sizeof(dir), "%s/%s/expected", EXPORT_FIXTURES_DIR, shapes[i]);
                golden_compare(dir, "lab.yaml", yaml);
                golden_compare(dir, "svd.env", env);
                free(yaml);
                free(env);
                free(p);
        }
}

/* Same plan, same bytes: read and written twice. */
static void test_byte_stable(void)
{
        for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
                for (int format = LAUNCHER_SPARKRUN; format <= LAUNCHER_SVD; format++) {
                        struct launcher_plan *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
                        char *x, *y;

                        CHECK(read_plan(shapes[i], NULL, a) == 0 && read_plan(shapes[i], NULL, b) == 0);
                        x = render(a, format, "lab");
                        y = render(b, format, "lab");
                        CHECK_STREQ(x, y);
                        free(x);
                        free(y);
                        free(a);
                        free(b);
                }
}

/* The value of key in a rendered file ("key: " or "KEY="), unquoted, or "". */
static void value_of(const char *text, const char *key, char *out, size_t size)
{
        const char *s = strstr(text, key);
        size_t n;

        out[0] = '\0';
        if (!s)
                return;
        s += strlen(key);
        if (*s == '"')
                s++;
        n = strcspn(s, "\"\n");
        snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), s);
}

static void test_sparkrun_rules(void)
{
        struct launcher_plan *p = calloc(1, sizeof(*p));
        char *yaml, value[256];

        CHECK(read_plan("switch", NULL, p) == 0);
        yaml = render(p, LAUNCHER_SPARKRUN, "lab");
        /* hosts[0] is the head, the rest in rank order */
        CHECK(strstr(
                yaml,
                "hosts:\n  - \"10.10.0.1\"\n  - \"10.10.0.2\"\n  - \"10.10.0.3\"\n  - \"10.10.0.4\"\n"));
        value_of(yaml, "topology: ", value, sizeof(value));
        CHECK_STREQ(value, "switch");
        value_of(yaml, "transfer_interface: ", value, sizeof(value));
        CHECK_STREQ(value, "cx7"); /* sparkrun takes cx7 or mgmt */
        value_of(yaml, "name: ", value, sizeof(value));
        CHECK_STREQ(value, "lab");
        free(yaml);
        /* sparkrun's name rule: a letter or digit first, then letters, digits, '_' and '-' */
        {
                static const char *const bad[] = { "-lab", "a b", "lab.yaml", "../x", "", "l\"ab" };

                for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                        yaml = render(p, LAUNCHER_SPARKRUN, bad[i]);
                        CHECK(strncmp(yaml, "refused: sparkrun takes a cluster name", 38) == 0);
                        free(yaml);
                }
        }
        yaml = render(p, LAUNCHER_SPARKRUN, "Lab_2-b");
        CHECK(strncmp(yaml, "refused", 7) != 0);
        free(yaml);
        /* a ring of three is sparkrun's ring, on the management plane's addresses */
        CHECK(read_plan("ring3", NULL, p) == 0);
        yaml = render(p, LAUNCHER_SPARKRUN, "lab");
        value_of(yaml, "topology: ", value, sizeof(value));
        CHECK_STREQ(value, "ring");
        value_of(yaml, "transfer_interface: ", value, sizeof(value));
        CHECK_STREQ(value, "mgmt");
        free(yaml);
        /* a ring of four: sparkrun's ring is three nodes */
        CHECK(read_plan("ring4", NULL, p) == 0);
        yaml = render(p, LAUNCHER_SPARKRUN, "lab");
        CHECK(strstr(yaml, "refused: sparkd's cabling map is a ring of 4") != NULL);
        free(yaml);
        free(p);
}

static void drop_first_node_from_plan(json_object *plan, json_object *env)
{
        json_object *nodes = json_object_object_get(plan, "nodes");

        (void)env;
        json_object_array_del_idx(nodes, 0, 1);
}

static void different_eth_if(json_object *plan, json_object *env)
{
        json_object *nodes = json_object_object_get(plan, "nodes");

        (void)env;
        json_object_object_add(json_object_array_get_idx(nodes, 1), "ifname",
                               json_object_new_string("enp1s0f0np0"));
}

static void hostile_value(json_object *plan, json_object *env)
{
        json_object *vars = json_object_object_get(env, "variables"), *v = json_object_new_object();

        (void)plan;
        json_object_object_add(v, "name", json_object_new_string("NCCL_DEBUG"));
        json_object_object_add(v, "value", json_object_new_string("INFO\"\nLOCAL_IP=$(id)"));
        json_object_array_add(vars, v);
}

static void hostile_name(json_object *plan, json_object *env)
{
        json_object *nodes = json_object_object_get(plan, "nodes");

        (void)env;
        json_object_object_add(json_object_array_get_idx(nodes, 2), "name",
                               json_object_new_string("evil\x1b[2J\n"));
        json_object_object_add(json_object_array_get_idx(nodes, 2), "ifname",
                               json_object_new_string("eth9"));
}

static void test_svd_rules(void)
{
        struct launcher_plan *p = calloc(1, sizeof(*p));
        char *env, nodes[256], local[64];

        CHECK(read_plan("ring3", NULL, p) == 0);
        env = render(p, LAUNCHER_SVD, NULL);
        value_of(env, "CLUSTER_NODES=", nodes, sizeof(nodes));
        value_of(env, "LOCAL_IP=", local, sizeof(local));
        CHECK_STREQ(nodes, "192.168.1.11,192.168.1.12,192.168.1.13"); /* the head first */
        CHECK_STREQ(local, "192.168.1.12");                           /* this node, rank 1 */
        CHECK(strstr(nodes, local) != NULL);                          /* LOCAL_IP among the nodes */
        CHECK(strstr(env, "\nIB_IF=\"roceP2p1s0f1,rocep1s0f1\"\n"));  /* both twins, no ports */
        CHECK(strstr(env, "\nETH_IF=\"enP7s7\"\n"));
        CHECK(strstr(env, "\nMASTER_PORT=\"29500\"\n"));
        CHECK(strstr(env, "\nCONTAINER_NCCL_IB_MERGE_NICS=\"0\"\n"));
        CHECK(!strstr(env, "CONTAINER_NCCL_IB_HCA") && !strstr(env, "CONTAINER_NODE_RANK"));
        free(env);
        /* one ETH_IF for every rank */
        CHECK(read_plan("ring3", different_eth_if, p) == 0);
        env = render(p, LAUNCHER_SVD, NULL);
        CHECK(strstr(env, "refused: ETH_IF is one netdev for every rank") != NULL);
        free(env);
        /* a peer's name reaches the refusal without its control bytes */
        CHECK(read_plan("ring3", hostile_name, p) == 0);
        env = render(p, LAUNCHER_SVD, NULL);
        CHECK(strstr(env, "the plan's spark1 uses enP7s7 and evil?[2J? uses eth9") != NULL);
        free(env);
        /* a value bash would run, or a line break, is refused, not written */
        CHECK(read_plan("pair", hostile_value, p) == 0);
        env = render(p, LAUNCHER_SVD, NULL);
        CHECK(strstr(env, "refused: CONTAINER_NCCL_DEBUG") != NULL);
        free(env);
        /* a node that is no member has no LOCAL_IP */
        CHECK(read_plan("pair", drop_first_node_from_plan, p) == 0);
        p->self_rank = -1;
        env = render(p, LAUNCHER_SVD, NULL);
        CHECK(strstr(env, "refused: this node is not a member") != NULL);
        free(env);
        free(p);
}

static void self_rank_0(json_object *plan, json_object *env)
{
        json_object *nodes = json_object_object_get(plan, "nodes");

        (void)env;
        for (size_t i = 0; i < json_object_array_length(nodes); i++)
                json_object_object_add(json_object_array_get_idx(nodes, i), "self",
                                       json_object_new_boolean(i == 0));
}

static void drop_last_node_from_plan(json_object *plan, json_object *env)
{
        json_object *nodes = json_object_object_get(plan, "nodes");

        (void)env;
        json_object_array_del_idx(nodes, json_object_array_length(nodes) - 1, 1);
}

/* The first cable's first twin loses its address at one end. */
static void unaddressed_cable(json_object *map)
{
        json_object *node = json_object_array_get_idx(json_object_object_get(map, "nodes"), 0);
        json_object *ports = json_object_object_get(node, "ports");

        for (size_t i = 0; i < json_object_array_length(ports); i++)
                json_object_object_add(json_object_array_get_idx(ports, i), "addresses",
                                       json_object_new_array());
}

/* spark2's cables and spark3's trade places: the ring is 1-2-3-4 now, not 1-3-2-4. */
static void swap_ids(json_object *o)
{
        static const char *const id2 = "00000000000000000000000000000002",
                                 *const id3 = "00000000000000000000000000000003";
        const char *id = json_object_get_string(json_object_object_get(o, "node_id"));

        if (id && (strcmp(id, id2) == 0 || strcmp(id, id3) == 0))
                json_object_object_add(o, "node_id",
                                       json_object_new_string(strcmp(id, id2) == 0 ? id3 : id2));
}

static void cables_moved(json_object *map)
{
        json_object *nodes = json_object_object_get(map, "nodes"),
                    *links = json_object_object_get(map, "links");

        for (size_t i = 0; i < json_object_array_length(nodes); i++)
                swap_ids(json_object_array_get_idx(nodes, i));
        for (size_t i = 0; i < json_object_array_length(links); i++) {
                swap_ids(json_object_object_get(json_object_array_get_idx(links, i), "a"));
                swap_ids(json_object_object_get(json_object_array_get_idx(links, i), "b"));
        }
}

/* CLUSTER_LINKS against the rules of launch-cluster.sh's reader: a JSON list of objects of two
 * ends, each end a CLUSTER_NODES address mapped to an IPv4 address no other node has, no link
 * twice, and each pair of neighbours in CLUSTER_NODES (round the ring) joined by a link. */
static void check_links(const char *env, const char *nodes, size_t want_links)
{
        char links[4096], list[256], *s;
        const char *nodev[16];
        size_t n = 0;
        json_object *j;

        CHECK((s = strstr(env, "\nCLUSTER_LINKS='")) != NULL);
        snprintf(links, sizeof(links), "%s", s + 16);
        CHECK((s = strstr(links, "'\n")) != NULL);
        *s = '\0';
        CHECK(strspn(links, "[]{}\":,.0123456789") == strlen(links)); /* nothing bash would expand */
        j = json_tokener_parse(links);
        CHECK(j && json_object_is_type(j, json_type_array));
        CHECK(json_object_array_length(j) == want_links);
        snprintf(list, sizeof(list), "%s", nodes);
        for (char *t = strtok(list, ","); t && n < 16; t = strtok(NULL, ","))
                nodev[n++] = t;
        for (size_t i = 0; i < json_object_array_length(j); i++) {
                json_object *l = json_object_array_get_idx(j, i);
                int ends = 0;

                CHECK(json_object_object_length(l) == 2);
                json_object_object_foreach(l, key, value) {
                        bool in = false;

                        for (size_t k = 0; k < n; k++)
                                in |= strcmp(nodev[k], key) == 0;
                        CHECK(in);
                        CHECK(json_object_is_type(value, json_type_string));
                        /* an address belongs to one node */
                        for (size_t m = 0; m < json_object_array_length(j); m++) {
                                json_object *o = json_object_array_get_idx(j, m);

                                json_object_object_foreach(o, k2, v2)
                                        CHECK(strcmp(json_object_get_string(v2),
                                                     json_object_get_string(value)) != 0 ||
                                              strcmp(k2, key) == 0);
                        }
                        ends++;
                }
                CHECK(ends == 2);
                for (size_t m = 0; m < i; m++)
                        CHECK(strcmp(json_object_to_json_string(l),
                                     json_object_to_json_string(json_object_array_get_idx(j, m))) != 0);
        }
        for (size_t k = 0; k < n; k++) {
                const char *x = nodev[k], *y = nodev[(k + 1) % n];
                bool joined = false;

                for (size_t i = 0; i < json_object_array_length(j); i++) {
                        json_object *l = json_object_array_get_idx(j, i);

                        joined |= json_object_object_get_ex(l, x, NULL) &&
                                  json_object_object_get_ex(l, y, NULL);
                }
                CHECK(joined);
        }
        json_object_put(j);
}

/* A ring of four: CLUSTER_NODES round the ring from this node, CLUSTER_LINKS each cable's twins. */
static void test_svd_ring(void)
{
        struct launcher_plan *p = calloc(1, sizeof(*p));
        char *env, nodes[256], local[64];

        CHECK(read_plan("ring4", NULL, p) == 0);
        CHECK(p->n_links == 8); /* four cables, two twins each */
        env = render(p, LAUNCHER_SVD, NULL);
        value_of(env, "CLUSTER_NODES=", nodes, sizeof(nodes));
        value_of(env, "LOCAL_IP=", local, sizeof(local));
        /* cabled 1-3-2-4-1: from the head toward its lower-ranked neighbour (spark3), this node
         * (spark2) first */
        CHECK_STREQ(nodes, "192.168.1.12,192.168.1.14,192.168.1.11,192.168.1.13");
        CHECK_STREQ(local, "192.168.1.12");
        check_links(env, nodes, 8);
        free(env);
        /* on the head: the same ring, the head first */
        CHECK(read_plan("ring4", self_rank_0, p) == 0);
        env = render(p, LAUNCHER_SVD, NULL);
        value_of(env, "CLUSTER_NODES=", nodes, sizeof(nodes));
        CHECK_STREQ(nodes, "192.168.1.11,192.168.1.13,192.168.1.12,192.168.1.14");
        check_links(env, nodes, 8);
        free(env);
        /* a node left out of the plan: the ring does not close */
        CHECK(read_plan("ring4", drop_last_node_from_plan, p) == 0);
        env = render(p, LAUNCHER_SVD, NULL);
        CHECK(strstr(env, "refused: the plan has 3 of the ring's 4 nodes") != NULL);
        free(env);
        /* a ring with a node missing from the map is no ring: NCCL would meet pairs no cable links */
        CHECK(read_plan("ring4", NULL, p) == 0);
        snprintf(p->shape, sizeof(p->shape), "mixed");
        env = render(p, LAUNCHER_SVD, NULL);
        CHECK(strstr(env, "refused: sparkd's cabling map is mixed") != NULL);
        free(env);
        /* a cable without addresses at one end carries nothing launch-cluster.sh can name */
        CHECK(read_plan_map("ring4", NULL, unaddressed_cable, p) == 0);
        env = render(p, LAUNCHER_SVD, NULL);
        CHECK(strstr(env, "refused: spark1 has 0 neighbours over cables with an IPv4 address") != NULL);
        free(env);
        free(p);
}

static int gate(enum launcher_format format, const char *text, const struct launcher_plan *p,
                const char *want);

/* A ring of n built here (cabled in name order, node i's port 0 to node i+1's port 1, each
 * cable's twins on 10.1T.I.0/24), seen from node self: the plan, env and map as sparkd gives
 * them. */
static int read_ring(int n, int self, struct launcher_plan *p)
{
        json_object *plan = load("ring4", "plan.json"), *env = load("ring4", "env.json");
        json_object *nodes = json_object_new_array(), *map = json_object_new_object();
        json_object *map_nodes = json_object_new_array(), *links = json_object_new_array();
        char why[512];
        int r;

        for (int i = 0; i < n; i++) {
                json_object *node = json_object_new_object(), *m = json_object_new_object(),
                            *ports = json_object_new_array();
                char id[48], name[24], addr[24];

                snprintf(id, sizeof(id), "%032d", i + 1);
                snprintf(name, sizeof(name), "spark%02d", i + 1);
                snprintf(addr, sizeof(addr), "192.168.1.%d", i + 1);
                json_object_object_add(node, "name", json_object_new_string(name));
                json_object_object_add(node, "node_id", json_object_new_string(id));
                json_object_object_add(node, "address", json_object_new_string(addr));
                json_object_object_add(node, "ifname", json_object_new_string("enP7s7"));
                json_object_object_add(node, "self", json_object_new_boolean(i == self));
                json_object_array_add(nodes, node);
                for (int port = 0; port < 2; port++)
                        for (int t = 0; t < 2; t++) {
                                json_object *po = json_object_new_object(), *a = json_object_new_array();
                                char netdev[20], ip[24];
                                int cable = port == 0 ? i + 1 : (i + n - 1) % n + 1;

                                snprintf(netdev, sizeof(netdev), t ? "enP2p1s0f%dnp%d" : "enp1s0f%dnp%d",
                                         port, port);
                                snprintf(ip, sizeof(ip), "10.%d.%d.%d/24", 10 + t, cable, port == 0 ? 1 : 2);
                                json_object_array_add(a, json_object_new_string(ip));
                                json_object_object_add(po, "netdev", json_object_new_string(netdev));
                                json_object_object_add(po, "addresses", a);
                                json_object_array_add(ports, po);
                        }
                json_object_object_add(m, "node_id", json_object_new_string(id));
                json_object_object_add(m, "ports", ports);
                json_object_array_add(map_nodes, m);
        }
        for (int i = 0; i < n; i++) {
                json_object *l = json_object_new_object(), *a = json_object_new_object(),
                            *b = json_object_new_object(), *twins = json_object_new_array();
                char ida[48], idb[48];

                snprintf(ida, sizeof(ida), "%032d", i + 1);
                snprintf(idb, sizeof(idb), "%032d", (i + 1) % n + 1);
                json_object_object_add(a, "node_id", json_object_new_string(ida));
                json_object_object_add(b, "node_id", json_object_new_string(idb));
                json_object_object_add(l, "a", a);
                json_object_object_add(l, "b", b);
                for (int t = 0; t < 2; t++) {
                        json_object *tw = json_object_new_object();

                        json_object_object_add(tw, "a",
                                               json_object_new_string(t ? "enP2p1s0f0np0" : "enp1s0f0np0"));
                        json_object_object_add(tw, "b",
                                               json_object_new_string(t ? "enP2p1s0f1np1" : "enp1s0f1np1"));
                        json_object_array_add(twins, tw);
                }
                json_object_object_add(l, "twin_subnets", twins);
                json_object_array_add(links, l);
        }
        json_object_object_add(map, "nodes", map_nodes);
        json_object_object_add(map, "links", links);
        json_object_object_add(plan, "nodes", nodes);
        json_object_object_add(json_object_object_get(env, "topology"), "nodes", json_object_new_int(n));
        r = launcher_plan_read(plan, env, p, why, sizeof(why));
        if (r == 0)
                r = launcher_plan_read_map(map, p, why, sizeof(why));
        json_object_put(plan);
        json_object_put(env);
        json_object_put(map);
        return r;
}

/* A ring of ten: its CLUSTER_LINKS line is over a kilobyte, and the gate still reads it whole. */
static void test_svd_ring10(void)
{
        struct launcher_plan *p = calloc(1, sizeof(*p));
        char *env, *edited, nodes[256], *at;

        CHECK(read_ring(10, 2, p) == 0);
        env = render(p, LAUNCHER_SVD, NULL);
        value_of(env, "CLUSTER_NODES=", nodes, sizeof(nodes));
        CHECK_STREQ(nodes, "192.168.1.3,192.168.1.4,192.168.1.5,192.168.1.6,192.168.1.7,192.168.1.8,"
                           "192.168.1.9,192.168.1.10,192.168.1.1,192.168.1.2");
        check_links(env, nodes, 20);
        CHECK(strcspn(strstr(env, "CLUSTER_LINKS="), "\n") > 1100);
        CHECK(gate(LAUNCHER_SVD, env, p, "matches the plan") == 0);
        /* the last twin's address changed, past the first kilobyte of the line */
        edited = strdup(env);
        CHECK(edited && (at = strstr(edited, "\"10.11.10.2\"")) != NULL);
        memcpy(at, "\"10.11.10.9\"", 12);
        CHECK(gate(LAUNCHER_SVD, edited, p, "CLUSTER_LINKS is") == 1);
        free(edited);
        free(env);
        free(p);
}

static void test_yaml_quote(void)
{
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        escape_yaml(f, "a\"b\\c\nd: e");
        fclose(f);
        CHECK_STREQ(text, "\"a\\\"b\\\\c\\x0ad: e\"");
        free(text);
        CHECK(escape_env_file_value_is_safe("=roceP2p1s0f1:1,rocep1s0f1:1"));
        CHECK(!escape_env_file_value_is_safe("a b") && !escape_env_file_value_is_safe("$(id)") &&
              !escape_env_file_value_is_safe("'") && !escape_env_file_value_is_safe(""));
}

/* The gate: the count of differences, and whether the report names want. */
static int gate(enum launcher_format format, const char *text, const struct launcher_plan *p,
                const char *want)
{
        char *report = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&report, &size);
        int r = launcher_check(f, format, text, "FILE", p);

        fclose(f);
        if (want && !strstr(report, want)) {
                fprintf(stderr, "the gate's report lacks \"%s\":\n%s", want, report);
                CHECK(false);
        }
        free(report);
        return r;
}

static void test_gate(void)
{
        struct launcher_plan *now = calloc(1, sizeof(*now)), *old = calloc(1, sizeof(*old));
        char *yaml, *env;

        /* the file just written matches */
        CHECK(read_plan("switch", NULL, now) == 0);
        yaml = render(now, LAUNCHER_SPARKRUN, "lab");
        env = render(now, LAUNCHER_SVD, NULL);
        CHECK(gate(LAUNCHER_SPARKRUN, yaml, now, "matches the plan") == 0);
        CHECK(gate(LAUNCHER_SVD, env, now, "matches the plan") == 0);
        free(yaml);
        free(env);

        /* a node added: the file was written when the plan had one node fewer */
        CHECK(read_plan("switch", drop_first_node_from_plan, old) == 0);
        snprintf(old->digest, sizeof(old->digest), "%s", now->digest);
        yaml = render(old, LAUNCHER_SPARKRUN, "lab");
        CHECK(gate(LAUNCHER_SPARKRUN, yaml, now,
                   "hosts lacks 10.10.0.1, the plan's rank 0 (spark1): a node joined") == 1);
        free(yaml);

        /* a cable moved: the file was written for a ring of three, the map is now a switch */
        CHECK(read_plan("ring3", NULL, old) == 0);
        CHECK(read_plan("ring3", NULL, now) == 0);
        yaml = render(old, LAUNCHER_SPARKRUN, "lab");
        snprintf(now->shape, sizeof(now->shape), "switch");
        CHECK(gate(LAUNCHER_SPARKRUN, yaml, now,
                   "topology is \"ring\", the plan's is \"switch\": the cabling changed") == 1);
        free(yaml);

        /* another node's .env copied here */
        CHECK(read_plan("ring3", self_rank_0, old) == 0);
        CHECK(read_plan("ring3", NULL, now) == 0);
        env = render(old, LAUNCHER_SVD, NULL);
        CHECK(gate(LAUNCHER_SVD, env, now, "this .env is spark1's, copied to this node") >= 1);
        free(env);

        /* cables moved on a ring of four: CLUSTER_NODES and CLUSTER_LINKS are not the map's */
        CHECK(read_plan("ring4", NULL, old) == 0);
        CHECK(read_plan_map("ring4", NULL, cables_moved, now) == 0);
        env = render(old, LAUNCHER_SVD, NULL);
        CHECK(gate(LAUNCHER_SVD, env, now, "the cabling changed") >= 1);
        CHECK(gate(LAUNCHER_SVD, env, now, "CLUSTER_LINKS is") >= 1);
        free(env);
        CHECK(read_plan("ring3", NULL, now) == 0);

        /* a hand-set NCCL variable the plan does not set */
        env = render(now, LAUNCHER_SVD, NULL);
        {
                char *edited = NULL;

                CHECK(asprintf(&edited, "%sCONTAINER_NCCL_IB_DISABLE=1\n", env) > 0);
                CHECK(gate(LAUNCHER_SVD, edited, now,
                           "CONTAINER_NCCL_IB_DISABLE is set, the plan sets no") == 1);
                free(edited);
        }
        free(env);
        free(now);
        free(old);
}

int main(void)
{
        RUN(test_golden);
        RUN(test_byte_stable);
        RUN(test_sparkrun_rules);
        RUN(test_svd_rules);
        RUN(test_svd_ring);
        RUN(test_svd_ring10);
        RUN(test_yaml_quote);
        RUN(test_gate);
        return test_result();
}
