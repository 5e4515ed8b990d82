/*
 * env-check's judgement of a job's environment on fixture hosts: a clean environment (what `sparkc
 * env` gives the node) finds nothing; one copied from another fixture node (other HCA and netdev
 * names), one twin of a port, a socket interface on Wi-Fi or a bridge, a wrong GID index, GPU
 * Direct RDMA on GB10, another node's address, a stale /etc/nccl.conf and a low memlock limit each
 * give their finding with its fix. The text sparkc prints is compared with golden files.
 */
#include <errno.h>

#include "client/report.h"
#include "daemon/fabric/env_check.h"
#include "daemon/fabric/envgen.h"
#include "golden.h"

#define MiB (1024ULL * 1024)

/* The variables `sparkc env` gives host, as an environment. */
static void env_of(const char *host, struct env_settings *out)
{
        struct fabric_facts f;
        json_object *env, *vars;

        CHECK(load_host(host, &f) == 0);
        env = envgen_build(&f, ENV_MODE_AUTO);
        CHECK(json_object_object_get_ex(env, "variables", &vars));
        for (size_t i = 0; vars && i < json_object_array_length(vars); i++) {
                json_object *v = json_object_array_get_idx(vars, i), *name, *value;

                json_object_object_get_ex(v, "name", &name);
                json_object_object_get_ex(v, "value", &value);
                CHECK(env_settings_add(out, json_object_get_string(name), json_object_get_string(value),
                                       "environment") == 0);
        }
        json_object_put(env);
        fabric_facts_free(&f);
}

/* Replaces (or adds) one variable of an environment. */
static void env_set(struct env_settings *s, const char *name, const char *value)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->v[i].name, name) == 0) {
                        free(s->v[i].value);
                        s->v[i].value = strdup(value);
                        return;
                }
        CHECK(env_settings_add(s, name, value, "environment") == 0);
}

static void env_unset(struct env_settings *s, const char *name)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->v[i].name, name) == 0) {
                        free(s->v[i].value);
                        s->v[i].value = strdup("");
                        free(s->v[i].name);
                        s->v[i].name = strdup("UNSET_FOR_TEST");
                }
}

static json_object *judge(const char *host, const struct env_check_input *in)
{
        struct fabric_facts f;
        json_object *o;

        CHECK(load_host(host, &f) == 0);
        o = env_check_run(&f, in);
        fabric_facts_free(&f);
        return o;
}

/* The finding about variable (NULL: about none) whose problem says what; NULL when none. */
static json_object *finding(json_object *result, const char *variable, const char *what)
{
        json_object *list;

        json_object_object_get_ex(result, "findings", &list);
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *f = json_object_array_get_idx(list, i), *v, *p;

                json_object_object_get_ex(f, "variable", &v);
                json_object_object_get_ex(f, "problem", &p);
                if ((variable ? v && strcmp(json_object_get_string(v), variable) == 0 : !v) &&
                    strstr(json_object_get_string(p), what))
                        return f;
        }
        return NULL;
}

static const char *field(json_object *f, const char *key)
{
        json_object *v;

        return f && json_object_object_get_ex(f, key, &v) && v ? json_object_get_string(v) : "";
}

/* What sparkc prints, compared with host's golden name; returns its exit status. */
static int golden_report(const char *host, const char *name, json_object *result)
{
        return compare_golden_report(host, name, report_env_check, result);
}

static void input_free(struct env_check_input *in)
{
        env_settings_free(&in->environ);
        env_settings_free(&in->files);
}

static void test_clean(void)
{
        struct env_check_input in = { .has_memlock = true,
                                      .memlock_soft = HOSTFACTS_UNLIMITED,
                                      .memlock_hard = HOSTFACTS_UNLIMITED };
        json_object *r;

        env_of("spark-twins", &in.environ);
        r = judge("spark-twins", &in);
        CHECK_STREQ(field(r, "status"), "ok");
        CHECK(golden_report("spark-twins", "env-check-clean.txt", r) == 0);
        json_object_put(r);
        input_free(&in);
}

/* The environment of a generic server (mlx5_0 on enp65s0f0np0) copied onto a Spark. */
static void test_other_node(void)
{
        struct env_check_input in = { 0 };
        json_object *r, *f;

        env_of("single-port", &in.environ);
        r = judge("spark-twins", &in);
        CHECK_STREQ(field(r, "status"), "fail");
        f = finding(r, "NCCL_IB_HCA", "no RDMA device mlx5_0");
        CHECK(f != NULL);
        CHECK(strstr(field(f, "problem"), "roceP2p1s0f0, roceP2p1s0f1, rocep1s0f0, rocep1s0f1") != NULL);
        CHECK_STREQ(field(f, "fix"),
                    "export NCCL_IB_HCA='=roceP2p1s0f1:1,rocep1s0f1:1' (what `sparkc env` gives "
                    "this node)");
        CHECK(finding(r, "NCCL_SOCKET_IFNAME", "no netdev enp65s0f0np0") != NULL);
        CHECK(finding(r, "GLOO_SOCKET_IFNAME", "no netdev enp65s0f0np0") != NULL);
        CHECK(finding(r, "OMPI_MCA_btl_tcp_if_include", "no netdev enp65s0f0np0") != NULL);
        CHECK(finding(r, "UCX_NET_DEVICES", "no RDMA device mlx5_0") != NULL);
        CHECK(golden_report("spark-twins", "env-check-other-node.txt", r) == 2);
        json_object_put(r);
        input_free(&in);
}

static void test_one_twin(void)
{
        struct env_check_input in = { 0 };
        json_object *r, *f;

        env_of("spark-twins", &in.environ);
        env_set(&in.environ, "NCCL_IB_HCA", "=rocep1s0f1:1");
        r = judge("spark-twins", &in);
        CHECK_STREQ(field(r, "status"), "warn");
        f = finding(r, "NCCL_IB_HCA", "lists rocep1s0f1 but not its twin roceP2p1s0f1");
        CHECK(f != NULL);
        CHECK_STREQ(field(f, "severity"), "warning");
        CHECK(golden_report("spark-twins", "env-check-one-twin.txt", r) == 1);
        json_object_put(r);
        input_free(&in);
}

/* mgmt-fallback has wlan0 (Wi-Fi), docker0 (a bridge) and eno1 (management). */
static void test_socket_interfaces(void)
{
        struct env_check_input in = { 0 };
        json_object *r;

        CHECK(env_settings_add(&in.environ, "NCCL_SOCKET_IFNAME", "=wlan0", "environment") == 0);
        CHECK(env_settings_add(&in.environ, "GLOO_SOCKET_IFNAME", "docker0", "environment") == 0);
        CHECK(env_settings_add(&in.environ, "OMPI_MCA_btl_tcp_if_include", "192.168.1.0/24",
                               "environment") == 0);
        CHECK(env_settings_add(&in.environ, "OMPI_MCA_oob_tcp_if_include", "10.9.0.0/16", "environment") ==
              0);
        r = judge("mgmt-fallback", &in);
        CHECK(finding(r, "NCCL_SOCKET_IFNAME", "wlan0 is Wi-Fi") != NULL);
        CHECK_STREQ(field(finding(r, "NCCL_SOCKET_IFNAME", "wlan0 is Wi-Fi"), "fix"),
                    "export NCCL_SOCKET_IFNAME='=eno1' (what `sparkc env` gives this node)");
        CHECK(finding(r, "GLOO_SOCKET_IFNAME", "docker0 is a bridge") != NULL);
        CHECK(finding(r, "OMPI_MCA_btl_tcp_if_include", "wlan0 is Wi-Fi") != NULL);
        CHECK(finding(r, "OMPI_MCA_oob_tcp_if_include", "no address of this node is in 10.9.0.0/16") !=
              NULL);
        CHECK(golden_report("mgmt-fallback", "env-check-wifi.txt", r) == 2);
        json_object_put(r);
        input_free(&in);
}

static void test_gid_gdr_address(void)
{
        struct env_check_input in = { 0 };
        json_object *r;

        env_of("spark-twins", &in.environ);
        env_set(&in.environ, "NCCL_IB_GID_INDEX", "5");
        env_set(&in.environ, "NCCL_NET_GDR_LEVEL", "SYS");
        env_set(&in.environ, "VLLM_HOST_IP", "192.168.177.12");
        env_set(&in.environ, "NCCL_IB_DISABLE", "1");
        r = judge("spark-twins", &in);
        CHECK(finding(r, "NCCL_IB_GID_INDEX",
                      "GID 5 of rocep1s0f1 port 1 is empty; its RoCE v2 GID for "
                      "192.168.177.11 is 3") != NULL);
        CHECK(finding(r, "NCCL_NET_GDR_LEVEL", "GPU Direct RDMA on a unified-memory GPU where") != NULL);
        CHECK(finding(r, "VLLM_HOST_IP", "192.168.177.12 is not an address of this node") != NULL);
        CHECK(finding(r, "NCCL_IB_DISABLE", "turns RDMA off") != NULL);
        json_object_put(r);

        /* Where the peers show whose address it is, the finding names that node. */
        {
                struct fabric_facts f;

                CHECK(load_host("spark-twins", &f) == 0);
                f.peers = json_tokener_parse("{\"peers\": [{\"name\": \"spark-b\", \"addresses\": "
                                             "[\"192.168.177.12\"], \"via\": null}]}");
                r = env_check_run(&f, &in);
                CHECK(finding(r, "VLLM_HOST_IP", "192.168.177.12 is spark-b's address, not this node's") !=
                      NULL);
                json_object_put(r);
                fabric_facts_free(&f);
        }
        input_free(&in);

        /* direct-fabric: GB10 with nvidia_peermem loaded, where GPU Direct RDMA hangs NCCL. */
        CHECK(env_settings_add(&in.environ, "NCCL_NET_GDR_LEVEL", "PHB", "environment") == 0);
        r = judge("direct-fabric", &in);
        CHECK(finding(r, "NCCL_NET_GDR_LEVEL", "nvidia_peermem loaded: NCCL's init hangs") != NULL);
        json_object_put(r);
        input_free(&in);
}

static const char *fix_of(json_object *f)
{
        json_object *v;

        return f && json_object_object_get_ex(f, "fix", &v) ? json_object_get_string(v) : "";
}

/* spark-twins' twin roceP2p1s0f1 is active, listed in NCCL_IB_HCA, and its netdev has no IPv4
 * address: no index is right for it, though 3 is rocep1s0f1's. */
static void test_gid_twin_without_address(void)
{
        struct env_check_input in = { 0 };
        json_object *r;

        env_of("spark-twins", &in.environ);
        env_set(&in.environ, "NCCL_IB_GID_INDEX", "3");
        r = judge("spark-twins", &in);
        CHECK(finding(r, "NCCL_IB_GID_INDEX",
                      "GID 3 of roceP2p1s0f1 port 1 is empty: its netdev enP2p1s0f1np1 has no IPv4 "
                      "address") != NULL);
        CHECK(finding(r, "NCCL_IB_GID_INDEX", "rocep1s0f1 port 1") == NULL);
        json_object_put(r);
        input_free(&in);
}

/* Another node's VLLM_HOST_IP is fixed with this node's address on the plan's plane; the
 * rendezvous is judged by the routes the caller looked up and by the plan's. */
static void test_plan_addresses(void)
{
        struct env_check_input in = { 0 };
        json_object *r;

        env_of("spark-twins", &in.environ);
        env_set(&in.environ, "VLLM_HOST_IP", "192.168.177.12");
        env_set(&in.environ, "MASTER_ADDR", "10.10.3.1");
        env_set(&in.environ, "RAY_ADDRESS", "192.168.1.2:6379");
        snprintf(in.own_address, sizeof(in.own_address), "192.168.1.1");
        snprintf(in.rendezvous, sizeof(in.rendezvous), "192.168.1.1");
        in.routes[0] = (struct env_check_route){ .name = "MASTER_ADDR",
                                                 .host = "10.10.3.1",
                                                 .error = -ENETUNREACH };
        in.routes[1] = (struct env_check_route){
                .name = "RAY_ADDRESS", .host = "192.168.1.2", .source = "192.168.1.1", .ifname = "eth0"
        };
        in.n_routes = 2;
        r = judge("spark-twins", &in);
        CHECK_STREQ(fix_of(finding(r, "VLLM_HOST_IP", "192.168.177.12 is not an address of this node")),
                    "export VLLM_HOST_IP=192.168.1.1 (this node's address on the job plan's plane)");
        CHECK(finding(r, "MASTER_ADDR",
                      "10.10.3.1 has no route from this node (the kernel's route lookup: "
                      "Network is unreachable)") != NULL);
        CHECK_STREQ(fix_of(finding(r, "MASTER_ADDR", "no route")),
                    "the job plan's rendezvous is 192.168.1.1: `sparkc env --for ...` gives it");
        CHECK(finding(r, "RAY_ADDRESS",
                      "192.168.1.2 is reachable from here (through eth0, from 192.168.1.1) but is not the "
                      "job "
                      "plan's rendezvous") != NULL);
        json_object_put(r);
        input_free(&in);
}

/* NCCL takes a config file's line only for a variable the environment does not set. */
static void test_stale_nccl_conf(void)
{
        struct env_check_input in = { 0 };
        char path[600], *text;
        json_object *r, *f;

        snprintf(path, sizeof(path), "%s/../nccl-conf/stale-other-node.conf", FIXTURES_DIR);
        text = golden_read_file(path);
        CHECK(text != NULL);
        CHECK(env_check_parse_conf(text ? text : "", "/etc/nccl.conf", &in.files) == 0);
        free(text);
        CHECK(in.files.n == 3);
        env_of("spark-twins", &in.environ);
        env_unset(&in.environ, "NCCL_IB_HCA");
        r = judge("spark-twins", &in);
        f = finding(r, "NCCL_IB_HCA", "no RDMA device mlx5_0");
        CHECK(f != NULL);
        CHECK_STREQ(field(f, "source"), "/etc/nccl.conf:2");
        CHECK(strstr(field(f, "fix"), "remove that line, or export NCCL_IB_HCA=") == field(f, "fix"));
        f = finding(r, "NCCL_SOCKET_IFNAME", "this environment's '=enp1s0f1np1' wins in this process");
        CHECK(f != NULL);
        CHECK_STREQ(field(f, "source"), "/etc/nccl.conf:3");
        CHECK(finding(r, "NCCL_DEBUG", "") == NULL);
        CHECK(golden_report("spark-twins", "env-check-nccl-conf.txt", r) == 2);
        json_object_put(r);
        input_free(&in);
}

static void test_memlock(void)
{
        struct env_check_input in = { .has_memlock = true,
                                      .memlock_soft = 8 * MiB,
                                      .memlock_hard = HOSTFACTS_UNLIMITED };
        json_object *r, *f;

        env_of("spark-twins", &in.environ);
        r = judge("spark-twins", &in);
        f = finding(r, NULL, "this job's memlock limit is 8192 KiB (hard unlimited)");
        CHECK_STREQ(field(f, "severity"), "warning");
        CHECK(strstr(field(f, "fix"), "ulimit -l unlimited") != NULL);
        json_object_put(r);
        in.memlock_soft = in.memlock_hard = 64 * 1024;
        r = judge("spark-twins", &in);
        f = finding(r, NULL, "this job's memlock limit is 64 KiB, hard 64 KiB");
        CHECK_STREQ(field(f, "severity"), "error");
        /* Login sessions already get unlimited there: the fix does not ask for that line again. */
        CHECK(strstr(field(f, "fix"),
                     "login sessions already get unlimited (/etc/security/limits.d/90-rdma.conf:1)") ==
              field(f, "fix"));
        json_object_put(r);
        r = judge("mesh-two-nics", &in);
        f = finding(r, NULL, "this job's memlock limit is 64 KiB, hard 64 KiB");
        CHECK(strstr(field(f, "fix"), "raise it where the job starts: login sessions through") != NULL);
        json_object_put(r);
        input_free(&in);
}

static void test_parse_conf(void)
{
        struct env_settings s = { 0 };
        char big[ENV_CHECK_MAX_FILE_LINES * 2 + 8];

        CHECK(env_check_parse_conf("#NCCL_IB_HCA=x\nno equals sign\nNCCL_IB_HCA= mlx5_0 \nHOME=/root\n"
                                   "NCCL_DEBUG=INFO",
                                   "/home/u/.nccl.conf", &s) == 0);
        CHECK(s.n == 2);
        CHECK_STREQ(s.v[0].value, " mlx5_0 "); /* NCCL trims nothing */
        CHECK_STREQ(s.v[0].source, "/home/u/.nccl.conf:3");
        CHECK_STREQ(s.v[1].source, "/home/u/.nccl.conf:5");
        env_settings_free(&s);
        memset(big, '\n', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        CHECK(env_check_parse_conf(big, "/etc/nccl.conf", &s) == -E2BIG);
        env_settings_free(&s);
}

int main(void)
{
        RUN(test_clean);
        RUN(test_other_node);
        RUN(test_one_twin);
        RUN(test_socket_interfaces);
        RUN(test_gid_gdr_address);
        RUN(test_gid_twin_without_address);
        RUN(test_plan_addresses);
        RUN(test_stale_nccl_conf);
        RUN(test_memlock);
        RUN(test_parse_conf);
        return test_result();
}
