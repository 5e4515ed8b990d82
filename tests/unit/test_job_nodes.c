/*
 * The job plan: a function of the cluster view's nodes, so every node that holds the same view
 * makes the same plan (members, head, ranks, rendezvous, digest), on a switch as on a ring of
 * four; the nodes left out named with why; [cluster] head honoured, and refused when two nodes
 * answer to it; the cluster nodes' JSON read with what is not an address skipped; and each
 * framework's variables in each env format, compared with golden files.
 */
#include "client/report.h"
#include "common/macro.h"
#include "daemon/fabric/envgen.h"
#include "daemon/fabric/envgen_frameworks.h"
#include "daemon/fabric/job_nodes.h"
#include "daemon/fabric/job_plan.h"
#include "golden.h"

static void add_address(struct job_node *n, const char *ifname, const char *cidr, bool is_management)
{
        json_object *o = json_object_new_object(), *section = json_object_new_object(),
                    *list = json_object_new_array(), *m;

        json_object_object_add(o, "ifname", json_object_new_string(ifname));
        json_object_object_add(o, "address", json_object_new_string(cidr));
        json_object_object_add(o, "rdma", json_object_new_boolean(true));
        /* Through the section reader, as a node's section arrives. */
        for (size_t i = 0; i < n->n_fabric; i++) {
                json_object *e = json_object_new_object();
                char text[32];

                snprintf(text, sizeof(text), "%s/%d", n->fabric[i].address, n->fabric[i].prefix);
                json_object_object_add(e, "ifname", json_object_new_string(n->fabric[i].ifname));
                json_object_object_add(e, "address", json_object_new_string(text));
                json_object_object_add(e, "rdma", json_object_new_boolean(true));
                json_object_array_add(list, e);
        }
        if (n->management.address[0]) {
                char text[32];

                m = json_object_new_object();
                snprintf(text, sizeof(text), "%s/%d", n->management.address, n->management.prefix);
                json_object_object_add(m, "ifname", json_object_new_string(n->management.ifname));
                json_object_object_add(m, "address", json_object_new_string(text));
                json_object_object_add(section, "management", m);
        }
        if (is_management)
                json_object_object_add(section, "management", o);
        else
                json_object_array_add(list, o);
        json_object_object_add(section, "fabric", list);
        job_node_read_addresses(n, section);
        json_object_put(section);
}

static struct job_node node(const char *name, const char *id, bool is_self, const char *doctor)
{
        struct job_node n = { .is_self = is_self, .has_addresses = true };

        snprintf(n.name, sizeof(n.name), "%s", name);
        snprintf(n.node_id, sizeof(n.node_id), "%s", id);
        snprintf(n.doctor, sizeof(n.doctor), "%s", doctor);
        if (strcmp(doctor, "failed") == 0)
                snprintf(n.doctor_why, sizeof(n.doctor_why), "gpu-direct: nvidia_peermem is loaded");
        return n;
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

static const char *const spark_ids[] = { "c3d0", "a1b2", "b7e9", "d4d4", "e5e5", "f6f6", "0707", "1818" };

/*
 * A ring of four as node `self` sees it: spark1..spark4, spark<n> p0 to spark<n+1> p1, each cable
 * its own /24 (10.10.<n>.0), a management address 192.168.1.<n> each. The order the view lists
 * them in differs per node, as views do. stale: the index of a node whose summary is stale, or -1.
 */
static void ring4(int self, int stale, struct job_nodes *nodes)
{
        *nodes = (struct job_nodes){ 0 };
        for (int k = 0; k < 4; k++) {
                int i = (self + k) % 4;
                char name[16], cidr[32];
                struct job_node n;

                snprintf(name, sizeof(name), "spark%d", i + 1);
                n = node(name, spark_ids[i], i == self, "ok");
                snprintf(cidr, sizeof(cidr), "10.10.%d.1/24", i);
                add_address(&n, "enp1s0f0np0", cidr, false);
                snprintf(cidr, sizeof(cidr), "10.10.%d.2/24", (i + 3) % 4);
                add_address(&n, "enp1s0f1np1", cidr, false);
                snprintf(cidr, sizeof(cidr), "192.168.1.%d/24", i + 1);
                add_address(&n, "enP7s7", cidr, true);
                n.is_stale = i == stale;
                n.age_s = i == stale ? (uint64_t)(7 + self) : 1;
                CHECK(job_nodes_add(nodes, &n) == 0);
        }
}

/* Eight on a switch: one /24 on the fabric, twins on a second; spark5's doctor fails. */
static void switch8(int self, struct job_nodes *nodes)
{
        *nodes = (struct job_nodes){ 0 };
        for (int k = 0; k < 8; k++) {
                int i = (k * 3 + self) % 8;
                char name[16], cidr[32];
                struct job_node n;

                snprintf(name, sizeof(name), "spark%d", i + 1);
                n = node(name, spark_ids[i], i == self, i == 4 ? "failed" : "ok");
                snprintf(cidr, sizeof(cidr), "192.168.178.%d/24", 11 + i);
                add_address(&n, "enP2p1s0f1np1", cidr, false);
                snprintf(cidr, sizeof(cidr), "192.168.177.%d/24", 11 + i);
                add_address(&n, "enp1s0f1np1", cidr, false);
                CHECK(job_nodes_add(nodes, &n) == 0);
        }
}

/* The plans every node makes agree: one digest, one head, ranks 0..n-1 once each; returns the
 * digest (static) and checks size. */
static const char *agree(json_object *const *plans, int n_nodes, int size, const char *head)
{
        static char digest[32];
        int seen[8] = { 0 };

        snprintf(digest, sizeof(digest), "%s", str(plans[0], "digest") ? str(plans[0], "digest") : "");
        CHECK(strlen(digest) == 16);
        for (int i = 0; i < n_nodes; i++) {
                CHECK_STREQ(str(plans[i], "digest"), digest);
                CHECK_STREQ(str(member(plans[i], "head"), "name"), head);
                CHECK(integer(plans[i], "size") == size);
                CHECK(json_object_array_length(member(plans[i], "nodes")) == (size_t)size);
                if (integer(plans[i], "rank") >= 0 && integer(plans[i], "rank") < 8)
                        seen[integer(plans[i], "rank")]++;
        }
        for (int r = 0; r < size; r++)
                CHECK(seen[r] == 1);
        return digest;
}

static void test_ring4_same_plan(void)
{
        json_object *plans[4];
        struct job_nodes nodes;
        char before[32];

        for (int self = 0; self < 4; self++) {
                ring4(self, -1, &nodes);
                plans[self] = job_plan_build(&nodes, NULL);
                job_nodes_free(&nodes);
        }
        snprintf(before, sizeof(before), "%s", agree(plans, 4, 4, "spark1"));
        for (int self = 0; self < 4; self++) {
                json_object *first = json_object_array_get_idx(member(plans[self], "nodes"), 0);

                CHECK_STREQ(str(plans[self], "plane"), "management");
                CHECK(strstr(str(plans[self], "plane_why"), "spark1 and spark3 share no fabric subnet") !=
                      NULL);
                CHECK_STREQ(str(member(plans[self], "head"), "address"), "192.168.1.1");
                CHECK_STREQ(str(first, "name"), "spark1");
                CHECK(integer(plans[self], "rank") == self);
                CHECK_STREQ(str(member(plans[self], "self"), "ifname"), "enP7s7");
                CHECK(json_object_array_length(member(plans[self], "left_out")) == 0);
                json_object_put(plans[self]);
        }

        /* spark3 stopped: the three others drop it with one new digest and name it. */
        for (int self = 0; self < 4; self++) {
                ring4(self, 2, &nodes);
                plans[self] = job_plan_build(&nodes, NULL);
                job_nodes_free(&nodes);
        }
        {
                json_object *alive[3] = { plans[0], plans[1], plans[3] };

                CHECK(strcmp(agree(alive, 3, 3, "spark1"), before) != 0);
        }
        for (int self = 0; self < 4; self++) {
                json_object *left = json_object_array_get_idx(member(plans[self], "left_out"), 0);

                CHECK_STREQ(str(left, "name"), "spark3");
                CHECK(strstr(str(left, "reason"), "its summary is stale: last heard") != NULL);
                json_object_put(plans[self]);
        }
}

static void test_switch8_same_plan(void)
{
        json_object *plans[8];
        struct job_nodes nodes;

        for (int self = 0; self < 8; self++) {
                switch8(self, &nodes);
                plans[self] = job_plan_build(&nodes, "spark6");
                job_nodes_free(&nodes);
        }
        agree(plans, 8, 7, "spark6");
        for (int self = 0; self < 8; self++) {
                json_object *list = member(plans[self], "nodes");

                CHECK_STREQ(str(plans[self], "plane"), "fabric");
                CHECK(strstr(str(plans[self], "plane_why"),
                             "192.168.177.0/24 holds an address of every member") != NULL);
                CHECK_STREQ(str(member(plans[self], "head"), "address"), "192.168.177.16");
                CHECK_STREQ(str(member(plans[self], "head"), "why"), "[cluster] head names it");
                CHECK_STREQ(str(json_object_array_get_idx(list, 1), "name"), "spark1");
                CHECK_STREQ(str(json_object_array_get_idx(list, 1), "address"), "192.168.177.11");
                CHECK_STREQ(str(json_object_array_get_idx(member(plans[self], "left_out"), 0), "reason"),
                            "its doctor fails: gpu-direct: nvidia_peermem is loaded");
                CHECK(self == 4 ? member(plans[self], "rank") == NULL : integer(plans[self], "rank") >= 0);
                json_object_put(plans[self]);
        }
}

static void test_head_rules(void)
{
        struct job_nodes nodes;
        struct job_node twin;
        json_object *plan;

        switch8(0, &nodes);
        plan = job_plan_build(&nodes, "spark5");
        CHECK(member(plan, "head") == NULL);
        CHECK_STREQ(str(plan, "error"), "[cluster] head is spark5, which is left out: its doctor fails: "
                                        "gpu-direct: nvidia_peermem is loaded: no rendezvous");
        json_object_put(plan);
        plan = job_plan_build(&nodes, "spark-z");
        CHECK_STREQ(str(plan, "error"),
                    "[cluster] head is spark-z, which no node of the cluster is called: no rendezvous");
        json_object_put(plan);
        CHECK(job_plan_name_is_unique(&nodes, "spark2"));
        /* A second node id answering to spark2: the name is no head. */
        for (size_t i = 0; i < nodes.n; i++)
                if (strcmp(nodes.v[i].name, "spark2") == 0)
                        twin = nodes.v[i];
        snprintf(twin.node_id, sizeof(twin.node_id), "9999");
        CHECK(job_nodes_add(&nodes, &twin) == 0);
        CHECK(!job_plan_name_is_unique(&nodes, "spark2"));
        plan = job_plan_build(&nodes, "spark2");
        CHECK(member(plan, "head") == NULL);
        CHECK_STREQ(
                str(plan, "error"),
                "[cluster] head is spark2, which names more than one node of the cluster: no rendezvous");
        json_object_put(plan);
        job_nodes_free(&nodes);
}

/* A node whose failing checks fill doctor_why: its reason ends at a word, never inside a port's
 * name ("...spark1:enp" as the hostfile printed it). */
static void test_long_reason(void)
{
        struct job_nodes nodes;
        json_object *plan;
        const char *reason = NULL;
        size_t used = 0;

        switch8(0, &nodes);
        for (size_t i = 0; i < nodes.n; i++) {
                struct job_node *d = &nodes.v[i];

                if (strcmp(d->name, "spark5") != 0)
                        continue;
                d->doctor_why[0] = '\0';
                while (used < sizeof(d->doctor_why) - 1) {
                        snprintf(d->doctor_why + used, sizeof(d->doctor_why) - used,
                                 "%sspark1:enp1s0f0np0 down", used ? ", " : "topology: ");
                        used = strlen(d->doctor_why);
                }
        }
        plan = job_plan_build(&nodes, NULL);
        reason = str(json_object_array_get_idx(member(plan, "left_out"), 0), "reason");
        CHECK(reason && strcmp(reason + strlen(reason) - strlen("down..."), "down...") == 0);
        json_object_put(plan);
        job_nodes_free(&nodes);
}

/* On the management plane, a node without a default route is left out, named. */
static void test_no_management(void)
{
        struct job_nodes nodes;
        json_object *plan, *left;

        ring4(0, -1, &nodes);
        nodes.v[2].management = (struct job_address){ 0 };
        plan = job_plan_build(&nodes, NULL);
        CHECK(integer(plan, "size") == 3);
        left = json_object_array_get_idx(member(plan, "left_out"), 0);
        CHECK_STREQ(str(left, "name"), "spark3");
        CHECK(strstr(str(left, "reason"), "no management address") != NULL);
        json_object_put(plan);
        job_nodes_free(&nodes);
}

/* A second node id named like a node of the view, or one the cluster table remembers by that
 * name: neither is the head, pinned or first by name, whichever id sorts first. */
static struct job_node *named(struct job_nodes *nodes, const char *name)
{
        for (size_t i = 0; i < nodes->n; i++)
                if (strcmp(nodes->v[i].name, name) == 0)
                        return &nodes->v[i];
        abort();
}

static void test_configured_head_named_twice(void)
{
        struct job_nodes nodes;
        struct job_node n;
        json_object *plan;

        switch8(0, &nodes);
        n = *named(&nodes, "spark3");
        n.is_self = false;
        snprintf(n.node_id, sizeof(n.node_id), "ffffffffffffffffffffffffffffffff");
        CHECK(job_nodes_add(&nodes, &n) == 0);
        CHECK(!job_plan_name_is_unique(&nodes, "spark3"));
        plan = job_plan_build(&nodes, "spark3");
        CHECK(member(plan, "head") == NULL);
        CHECK(strstr(str(plan, "error"), "names more than one node of the cluster") != NULL);
        json_object_put(plan);
        job_nodes_free(&nodes);

        switch8(0, &nodes);
        CHECK(job_plan_name_is_unique(&nodes, "spark3"));
        named(&nodes, "spark3")->is_name_shared = true;
        CHECK(!job_plan_name_is_unique(&nodes, "spark3"));
        plan = job_plan_build(&nodes, "spark3");
        CHECK(member(plan, "head") == NULL);
        json_object_put(plan);
        plan = job_plan_build(&nodes, NULL);
        CHECK_STREQ(str(member(plan, "head"), "name"), "spark1");
        json_object_put(plan);
        /* Unpinned, the first by name is passed over when its name is shared. */
        named(&nodes, "spark1")->is_name_shared = true;
        plan = job_plan_build(&nodes, NULL);
        CHECK_STREQ(str(member(plan, "head"), "name"), "spark2");
        json_object_put(plan);
        job_nodes_free(&nodes);
}

/* [cluster] rendezvous: the management network on a switch, a routed fabric on a ring. */
static void test_rendezvous_setting(void)
{
        struct job_nodes nodes;
        json_object *plan, *list;

        switch8(0, &nodes);
        for (size_t i = 0; i < nodes.n; i++)
                add_address(&nodes.v[i], "enP7s7", "192.168.1.9/24", true);
        plan = job_plan_build_on(&nodes, NULL, "management");
        CHECK_STREQ(str(plan, "plane"), "management");
        CHECK(strstr(str(plan, "plane_why"), "[cluster] rendezvous = management") != NULL);
        json_object_put(plan);
        job_nodes_free(&nodes);

        ring4(1, -1, &nodes);
        plan = job_plan_build_on(&nodes, NULL, "fabric");
        list = member(plan, "nodes");
        CHECK_STREQ(str(plan, "plane"), "fabric");
        CHECK(integer(plan, "size") == 4);
        CHECK_STREQ(str(json_object_array_get_idx(list, 0), "address"), "10.10.0.1");
        CHECK_STREQ(str(json_object_array_get_idx(list, 2), "address"), "10.10.1.2");
        CHECK(strstr(str(plan, "plane_why"), "routed") != NULL);
        json_object_put(plan);
        job_nodes_free(&nodes);
}

static void test_cluster_json(void)
{
        struct job_nodes nodes = { 0 };
        json_object *list = json_tokener_parse(
                "[{\"node_id\": \"c3d0\", \"name\": \"spark-a\", \"self\": true, \"stale\": false, "
                "\"age_s\": 0, \"doctor\": {\"verdict\": \"ok\", \"checks\": []}, \"addresses\": "
                "{\"management\": {\"ifname\": \"eth0\", \"address\": \"192.168.1.5/24\"}, \"fabric\": ["
                "{\"ifname\": \"fab0\", \"address\": \"10.0.0.1/24\", \"rdma\": false},"
                "{\"ifname\": \"fab1\", \"address\": \"10.0.0.300/24\"},"
                "{\"ifname\": \"fab 2\", \"address\": \"10.0.1.1/24\"},"
                "{\"ifname\": \"fab3\", \"address\": \"10.0.2.1/33\"}]}},"
                "{\"node_id\": \"a1b2\", \"name\": \"spark-b\", \"stale\": true, \"age_s\": 9,"
                "\"doctor\": {\"verdict\": \"failed\", \"checks\": [{\"id\": \"mtu\", \"status\": "
                "\"failed\", \"summary\": \"MTU 1500\"}]}, \"addresses\": null},"
                "{\"name\": \"no-id\"}]");

        CHECK(job_nodes_add_cluster(&nodes, list) == 0);
        CHECK(nodes.n == 2);
        CHECK(nodes.v[0].is_self && nodes.v[0].has_addresses);
        CHECK(nodes.v[0].n_fabric == 1);
        CHECK_STREQ(nodes.v[0].fabric[0].address, "10.0.0.1");
        CHECK(nodes.v[0].fabric[0].prefix == 24 && !nodes.v[0].fabric[0].has_rdma);
        CHECK_STREQ(nodes.v[0].management.address, "192.168.1.5");
        CHECK(nodes.v[1].is_stale && nodes.v[1].age_s == 9 && !nodes.v[1].has_addresses);
        CHECK_STREQ(nodes.v[1].doctor, "failed");
        CHECK_STREQ(nodes.v[1].doctor_why, "mtu: MTU 1500");
        json_object_put(list);
        job_nodes_free(&nodes);
}

/* Every framework in every format, on spark-twins as spark-b of the three. */
static void test_framework_goldens(void)
{
        static const char *const formats[] = { "sh", "docker", "systemd" };
        static const char *const frameworks[] = { "torchrun", "ray", "vllm", "sglang", "mpi" };
        struct fabric_facts f;
        struct job_nodes nodes;
        json_object *plan;

        CHECK(load_host("spark-twins", &f) == 0);
        switch8(1, &nodes);
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
                        CHECK(envgen_add_framework(env, fw, plan) == 0);
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
        switch8(0, &nodes);
        plan = job_plan_build(&nodes, "spark5");
        env = envgen_build(&f, ENV_MODE_AUTO);
        CHECK(envgen_add_framework(env, ENV_FRAMEWORK_TORCHRUN, plan) == -ENODATA);
        err = open_memstream(&text, &size);
        CHECK(report_env_for_refusal(err, env) == -ENODATA);
        fclose(err);
        CHECK_STREQ(text,
                    "sparkc: env --for torchrun: left out spark5: its doctor fails: gpu-direct: "
                    "nvidia_peermem is loaded\n"
                    "sparkc: env --for torchrun: [cluster] head is spark5, which is left out: its doctor "
                    "fails: gpu-direct: nvidia_peermem is loaded: no rendezvous\n");
        free(text);
        json_object_put(env);
        json_object_put(plan);
        /* The mpi variables need no rendezvous. */
        plan = job_plan_build(&nodes, "spark5");
        env = envgen_build(&f, ENV_MODE_AUTO);
        CHECK(envgen_add_framework(env, ENV_FRAMEWORK_MPI, plan) == 0);
        json_object_put(env);
        json_object_put(plan);
        job_nodes_free(&nodes);
        fabric_facts_free(&f);
}

int main(void)
{
        RUN(test_ring4_same_plan);
        RUN(test_switch8_same_plan);
        RUN(test_head_rules);
        RUN(test_configured_head_named_twice);
        RUN(test_long_reason);
        RUN(test_no_management);
        RUN(test_rendezvous_setting);
        RUN(test_cluster_json);
        RUN(test_framework_goldens);
        RUN(test_framework_refused);
        return test_result();
}
