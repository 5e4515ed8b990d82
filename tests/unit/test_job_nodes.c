/*
 * The nodes a job starts on: healthy nodes in rank order (the head first, then by name), the ones
 * left out with their reason, the head from [cluster] head or the first by name, the same plan on
 * every node; the peers method's result read into nodes; and each framework's variables in each
 * env format, compared with golden files.
 */
#include "client/report.h"
#include "common/macro.h"
#include "daemon/fabric/envgen.h"
#include "daemon/fabric/envgen_frameworks.h"
#include "daemon/fabric/job_nodes.h"
#include "golden.h"

static struct job_node node(const char *name, const char *id, const char *address, bool is_self, bool is_up,
                            const char *doctor)
{
        struct job_node n = { .is_self = is_self, .is_up = is_up };

        snprintf(n.name, sizeof(n.name), "%s", name);
        snprintf(n.node_id, sizeof(n.node_id), "%s", id);
        snprintf(n.address, sizeof(n.address), "%s", address);
        snprintf(n.doctor, sizeof(n.doctor), "%s", doctor);
        if (strcmp(doctor, "failed") == 0)
                snprintf(n.doctor_why, sizeof(n.doctor_why), "gpu-direct: nvidia_peermem is loaded");
        return n;
}

/* The cluster as node `self` (0, 1 or 2 of spark-a, spark-b, spark-c) sees it: spark-d is up but its
 * doctor fails, spark-e is down. */
static void view(int self, struct job_nodes *nodes)
{
        static const char *const names[] = { "spark-a", "spark-b", "spark-c" };
        static const char *const ids[] = { "c3d0", "a1b2", "b7e9" };
        static const char *const addresses[] = { "10.88.0.1", "10.88.0.2", "10.88.0.3" };
        struct job_node n;

        *nodes = (struct job_nodes){ 0 };
        n = node(names[self], ids[self], addresses[self], true, true, "warning");
        CHECK(job_nodes_add(nodes, &n) == 0);
        n = node("spark-d", "d4d4", "10.88.0.4", false, true, "failed");
        CHECK(job_nodes_add(nodes, &n) == 0);
        n = node("spark-e", "e5e5", "10.88.0.5", false, false, "ok");
        CHECK(job_nodes_add(nodes, &n) == 0);
        for (int i = 2; i >= 0; i--)
                if (i != self) {
                        n = node(names[i], ids[i], addresses[i], false, true, i == 2 ? "" : "ok");
                        CHECK(job_nodes_add(nodes, &n) == 0);
                }
}

static const char *str(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : NULL;
}

static int integer(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_int(v) : -1;
}

static json_object *member(json_object *o, const char *key)
{
        json_object *v = NULL;

        json_object_object_get_ex(o, key, &v);
        return v;
}

static void test_same_plan_everywhere(void)
{
        int seen[3] = { 0 };

        for (int self = 0; self < 3; self++) {
                struct job_nodes nodes;
                json_object *plan, *list, *left;

                view(self, &nodes);
                plan = job_plan_build(&nodes, NULL);
                CHECK_STREQ(str(member(plan, "head"), "name"), "spark-a");
                CHECK_STREQ(str(member(plan, "head"), "address"), "10.88.0.1");
                CHECK(integer(plan, "size") == 3);
                list = member(plan, "nodes");
                CHECK(json_object_array_length(list) == 3);
                CHECK_STREQ(str(json_object_array_get_idx(list, 1), "name"), "spark-b");
                CHECK_STREQ(str(json_object_array_get_idx(list, 2), "name"), "spark-c");
                CHECK(integer(plan, "rank") == self);
                if (integer(plan, "rank") >= 0 && integer(plan, "rank") < 3)
                        seen[integer(plan, "rank")]++;
                left = member(plan, "left_out");
                CHECK(json_object_array_length(left) == 2);
                CHECK_STREQ(str(json_object_array_get_idx(left, 0), "reason"),
                            "its doctor fails: gpu-direct: nvidia_peermem is loaded");
                CHECK_STREQ(str(json_object_array_get_idx(left, 1), "reason"),
                            "not up: the peer channel to it is down");
                json_object_put(plan);
                job_nodes_free(&nodes);
        }
        CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1);
}

/* A node whose failing checks fill doctor_why: its reason ends at a word, never inside a port's
 * name ("...spark1:enp" as the hostfile printed it). */
static void test_long_reason(void)
{
        struct job_nodes nodes = { 0 };
        struct job_node n = node("spark-a", "c3d0", "10.88.0.1", true, true, "ok"), d;
        json_object *plan;
        const char *reason;
        size_t used = 0;

        CHECK(job_nodes_add(&nodes, &n) == 0);
        d = node("spark-d", "d4d4", "10.88.0.4", false, true, "failed");
        d.doctor_why[0] = '\0';
        while (used < sizeof(d.doctor_why) - 1) {
                snprintf(d.doctor_why + used, sizeof(d.doctor_why) - used, "%sspark1:enp1s0f0np0 down",
                         used ? ", " : "topology: ");
                used = strlen(d.doctor_why);
        }
        CHECK(job_nodes_add(&nodes, &d) == 0);
        plan = job_plan_build(&nodes, NULL);
        reason = str(json_object_array_get_idx(member(plan, "left_out"), 0), "reason");
        CHECK(reason && strcmp(reason + strlen(reason) - strlen("down..."), "down...") == 0);
        json_object_put(plan);
        job_nodes_free(&nodes);
}

static void test_configured_head(void)
{
        struct job_nodes nodes;
        json_object *plan, *list;

        view(0, &nodes);
        plan = job_plan_build(&nodes, "spark-c");
        CHECK_STREQ(str(member(plan, "head"), "name"), "spark-c");
        CHECK_STREQ(str(member(plan, "head"), "why"), "[cluster] head names it");
        list = member(plan, "nodes");
        CHECK_STREQ(str(json_object_array_get_idx(list, 0), "name"), "spark-c");
        CHECK_STREQ(str(json_object_array_get_idx(list, 1), "name"), "spark-a");
        CHECK(integer(plan, "rank") == 1);
        json_object_put(plan);

        /* A configured head that is left out gives no rendezvous, never another head. */
        plan = job_plan_build(&nodes, "spark-d");
        CHECK(member(plan, "head") == NULL);
        CHECK_STREQ(str(plan, "error"), "[cluster] head is spark-d, which is left out: its doctor fails: "
                                        "gpu-direct: nvidia_peermem is loaded: no rendezvous");
        json_object_put(plan);
        plan = job_plan_build(&nodes, "spark-z");
        CHECK_STREQ(str(plan, "error"),
                    "[cluster] head is spark-z, which this node does not know: no rendezvous");
        json_object_put(plan);
        job_nodes_free(&nodes);
}

static void test_peers_json(void)
{
        struct job_nodes nodes = { 0 };
        json_object *peers = json_tokener_parse(
                "{\"peers\": ["
                "{\"name\": \"spark-a\", \"node_id\": \"c3d0\", \"state\": \"up\", \"via\": {\"iface\": "
                "\"fa\", "
                "\"local\": \"10.88.0.2\", \"remote\": \"10.88.0.1\"}},"
                "{\"name\": \"spark-c\", \"node_id\": \"b7e9\", \"state\": \"down\", \"via\": null},"
                "{\"name\": null, \"node_id\": null, \"state\": \"discovered\", \"via\": null},"
                "{\"name\": \"me\", \"node_id\": \"a1b2\", \"state\": \"self\", \"via\": null},"
                "{\"name\": \"spark-a\", \"node_id\": \"c3d0\", \"state\": \"up\", \"via\": null}]}");

        CHECK(job_nodes_add_peers(&nodes, peers) == 0);
        CHECK(nodes.n == 2);
        CHECK_STREQ(nodes.v[0].address, "10.88.0.1");
        CHECK(nodes.v[0].is_up && !nodes.v[0].is_self);
        CHECK_STREQ(nodes.v[1].name, "spark-c");
        CHECK(!nodes.v[1].is_up);
        json_object_put(peers);
        job_nodes_free(&nodes);
}

/* Every framework in every format, on spark-twins as spark-b of the three. */
static void test_framework_goldens(void)
{
        static const char *const formats[] = { "sh", "docker", "systemd" };
        static const char *const frameworks[] = { "torchrun", "ray", "vllm", "sglang", "mpi" };
        struct fabric_facts f;
        struct job_nodes nodes;
        char own[64], ifname[16];
        json_object *plan;

        CHECK(load_host("spark-twins", &f) == 0);
        CHECK(job_own_address(&f, own, sizeof(own), ifname, sizeof(ifname)));
        CHECK_STREQ(own, "192.168.177.11");
        CHECK_STREQ(ifname, "enp1s0f1np1");
        view(1, &nodes);
        plan = job_plan_build(&nodes, NULL);
        for (size_t i = 0; i < ARRAY_SIZE(frameworks); i++)
                for (size_t k = 0; k < ARRAY_SIZE(formats); k++) {
                        json_object *env = envgen_build(&f, ENV_MODE_AUTO);
                        enum env_framework fw;
                        enum env_format format;
                        char name[64], *text = NULL;
                        size_t size = 0;
                        FILE *out = open_memstream(&text, &size);

                        CHECK(env_framework_from_string(frameworks[i], &fw) == 0);
                        CHECK(env_format_from_string(formats[k], &format) == 0);
                        CHECK(envgen_add_framework(env, fw, plan, own, ifname) == 0);
                        CHECK(report_env_for_refusal(out, env) == 0);
                        CHECK(report_env(out, out, env, format) == 0);
                        fclose(out);
                        snprintf(name, sizeof(name), "env-for-%s.%s", frameworks[i], formats[k]);
                        compare_golden("spark-twins", name, text);
                        free(text);
                        json_object_put(env);
                }
        json_object_put(plan);
        job_nodes_free(&nodes);
        fabric_facts_free(&f);
}

/* No rendezvous, or this node left out: nothing but the reason. */
static void test_framework_refused(void)
{
        struct fabric_facts f;
        struct job_nodes nodes;
        json_object *plan, *env;
        char *text = NULL;
        size_t size = 0;
        FILE *err;

        CHECK(load_host("spark-twins", &f) == 0);
        view(0, &nodes);
        plan = job_plan_build(&nodes, "spark-d");
        env = envgen_build(&f, ENV_MODE_AUTO);
        CHECK(envgen_add_framework(env, ENV_FRAMEWORK_TORCHRUN, plan, "192.168.177.11", "enp1s0f1np1") ==
              -ENODATA);
        err = open_memstream(&text, &size);
        CHECK(report_env_for_refusal(err, env) == -ENODATA);
        fclose(err);
        CHECK_STREQ(text,
                    "sparkc: env --for torchrun: [cluster] head is spark-d, which is left out: its doctor "
                    "fails: gpu-direct: nvidia_peermem is loaded: no rendezvous\n");
        free(text);
        json_object_put(env);
        json_object_put(plan);
        /* The mpi variables need no rendezvous. */
        plan = job_plan_build(&nodes, "spark-d");
        env = envgen_build(&f, ENV_MODE_AUTO);
        CHECK(envgen_add_framework(env, ENV_FRAMEWORK_MPI, plan, "192.168.177.11", "enp1s0f1np1") == 0);
        json_object_put(env);
        json_object_put(plan);
        job_nodes_free(&nodes);
        fabric_facts_free(&f);
}

int main(void)
{
        RUN(test_same_plan_everywhere);
        RUN(test_configured_head);
        RUN(test_long_reason);
        RUN(test_peers_json);
        RUN(test_framework_goldens);
        RUN(test_framework_refused);
        return test_result();
}
