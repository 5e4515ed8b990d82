/* sparkc export and its gate: golden files for a pair, a switch and rings of three and four, each
 * field against the launcher's rules, the same bytes for the same plan, and the gate's verdict on
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

/* The plan of a fixture, with edit applied to its JSON before it is read. */
static int read_plan(const char *shape, void (*edit)(json_object *plan, json_object *env),
                     struct launcher_plan *p)
{
        json_object *plan = load(shape, "plan.json"), *env = load(shape, "env.json");
        char why[512];
        int r;

        CHECK(plan && env);
        if (edit)
                edit(plan, env);
        r = launcher_plan_read(plan, env, p, why, sizeof(why));
        json_object_put(plan);
        json_object_put(env);
        return r;
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

static void self_rank_0(json_object *plan, json_object *env)
{
        json_object *nodes = json_object_object_get(plan, "nodes");

        (void)env;
        for (size_t i = 0; i < json_object_array_length(nodes); i++)
                json_object_object_add(json_object_array_get_idx(nodes, i), "self",
                                       json_object_new_boolean(i == 0));
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
        RUN(test_yaml_quote);
        RUN(test_gate);
        return test_result();
}
