#include <errno.h>
#include <string.h>

#include "common/macro.h"
#include "daemon/config/probe_kinds.h"
#include "test.h"

static json_object *parse(const char *s)
{
        return s ? json_tokener_parse(s) : NULL;
}

static int check(const char *kind, const char *params_json, json_object **out, char *err, size_t size)
{
        json_object *in = parse(params_json);
        int r = probe_kind_params(probe_kind_find(kind), in, out, err, size);

        json_object_put(in);
        return r;
}

static void test_table(void)
{
        char names[128];

        CHECK(probe_kind_find("rtt") && !probe_kind_find("rtt")->is_bandwidth);
        CHECK(probe_kind_find("tcp") && probe_kind_find("tcp")->is_bandwidth);
        CHECK(probe_kind_find("tcp")->higher_is_better && !probe_kind_find("rtt")->higher_is_better);
        CHECK(probe_kind_find("warp") == NULL && probe_kind_find(NULL) == NULL);
        for (size_t i = 0; probe_kind_at(i); i++) {
                const struct probe_kind *k = probe_kind_at(i);

                CHECK(probe_kind_index(k) == i && i < PROBE_KINDS_MAX);
                CHECK(k->helper && strncmp(k->helper, "sparkd-probe-", 13) == 0);
                CHECK(k->metric && k->unit && k->summary && k->measure_sec);
                /* Each default lies in its own range. */
                for (const struct probe_param_spec *s = k->params; s->name; s++)
                        CHECK(s->min <= s->def && s->def <= s->max);
        }
        probe_kind_names(names, sizeof(names));
        CHECK(strncmp(names, "rtt, tcp", 8) == 0);
}

static void test_params(void)
{
        json_object *out = NULL;
        char err[256];

        CHECK(check("tcp", NULL, &out, err, sizeof(err)) == 0);
        CHECK(probe_kind_param(probe_kind_find("tcp"), out, "duration_s") == 5);
        CHECK(probe_kind_param(probe_kind_find("tcp"), out, "streams") == 1);
        CHECK(probe_kind_param(probe_kind_find("tcp"), out, "one_way") == 0);
        CHECK(json_object_object_length(out) == 4);
        json_object_put(out);

        CHECK(check("tcp", "{\"duration_s\": 2, \"streams\": 8}", &out, err, sizeof(err)) == 0);
        CHECK(probe_kind_param(probe_kind_find("tcp"), out, "streams") == 8);
        CHECK(probe_kind_param(probe_kind_find("tcp"), out, "size") == 128 * 1024);
        json_object_put(out);

        out = NULL;
        CHECK(check("rtt", "{\"streams\": 2}", &out, err, sizeof(err)) == -EINVAL && out == NULL);
        CHECK_STREQ(err, "the rtt probe takes no \"streams\" (it takes count 1-100000, size 1-1048576, "
                         "interval_us 0-10000000)");
        CHECK(check("tcp", "{\"streams\": 65}", &out, err, sizeof(err)) == -ERANGE);
        CHECK_STREQ(err, "the tcp probe's streams is an integer from 1 to 64");
        CHECK(check("tcp", "{\"streams\": \"4\"}", &out, err, sizeof(err)) == -ERANGE);
        CHECK(check("tcp", "{\"streams\": -1}", &out, err, sizeof(err)) == -ERANGE);
        CHECK(check("tcp", "{\"streams\": 2.5}", &out, err, sizeof(err)) == -ERANGE);
        CHECK(check("tcp", "[1]", &out, err, sizeof(err)) == -EINVAL);
}

static void test_helper_args(void)
{
        const struct probe_kind *tcp = probe_kind_find("tcp");
        json_object *out = NULL;
        char storage[16][24], err[128];
        char *argv[16];
        size_t n = 0;

        CHECK(check("tcp", "{\"duration_s\": 3}", &out, err, sizeof(err)) == 0);
        CHECK(probe_kind_helper_args(tcp, out, PROBE_SIDE_CLIENT, argv, &n, ARRAY_SIZE(argv), storage) == 0);
        CHECK(n == 6);
        if (n == 6) {
                CHECK_STREQ(argv[0], "--duration");
                CHECK_STREQ(argv[1], "3");
                CHECK_STREQ(argv[2], "--streams");
                CHECK_STREQ(argv[3], "1");
                CHECK_STREQ(argv[4], "--size");
                CHECK_STREQ(argv[5], "131072");
        }
        /* The server side of tcp needs none: the client says what it sends. */
        n = 0;
        CHECK(probe_kind_helper_args(tcp, out, PROBE_SIDE_SERVER, argv, &n, ARRAY_SIZE(argv), storage) == 0);
        CHECK(n == 0);
        n = 0;
        CHECK(probe_kind_helper_args(tcp, out, PROBE_SIDE_CLIENT, argv, &n, 4, storage) == -E2BIG);
        /* The deadline covers the measurement (both directions) and the set-up around it. */
        CHECK(probe_kind_deadline_sec(tcp, out) == 2 * 3 + 15);
        json_object_put(out);

        /* One way: the bare switch, and half the measuring time. */
        CHECK(check("tcp", "{\"duration_s\": 3, \"one_way\": 1}", &out, err, sizeof(err)) == 0);
        n = 0;
        CHECK(probe_kind_helper_args(tcp, out, PROBE_SIDE_CLIENT, argv, &n, ARRAY_SIZE(argv), storage) == 0);
        CHECK(n == 7 && strcmp(argv[6], "--one-way") == 0);
        CHECK(probe_kind_deadline_sec(tcp, out) == 3 + 15);
        json_object_put(out);

        CHECK(check("rtt", "{\"count\": 100000, \"interval_us\": 1000}", &out, err, sizeof(err)) == 0);
        CHECK(probe_kind_deadline_sec(probe_kind_find("rtt"), out) == 5 + 200 + 15);
        json_object_put(out);
}

static void test_nccl_params(void)
{
        const struct probe_kind *nccl = probe_kind_find("nccl");
        json_object *out = NULL, *v;
        char err[512];

        CHECK(nccl && nccl->is_bandwidth && nccl->higher_is_better && nccl->env_mode_param);
        CHECK(check("nccl", NULL, &out, err, sizeof(err)) == 0);
        CHECK(probe_kind_param(nccl, out, "max_bytes") == 256 << 20);
        CHECK(probe_kind_param(nccl, out, "iters") == 20 &&
              probe_kind_param(nccl, out, "warmup_iters") == 1);
        CHECK_STREQ(probe_kind_param_string(nccl, out, "mode"), "auto");
        CHECK(json_object_object_get_ex(out, "ops", &v) && json_object_array_length(v) == 2);
        CHECK(json_object_object_get_ex(out, "env", &v) && json_object_array_length(v) == 0);
        json_object_put(out);

        CHECK(check("nccl",
                    "{\"mode\": \"safe\", \"ops\": [\"all_reduce\"], \"env\": [\"NCCL_P2P_DISABLE=1\", "
                    "\"NCCL_IB_HCA==mlx5_0:1,mlx5_1:1\"]}",
                    &out, err, sizeof(err)) == 0);
        CHECK_STREQ(probe_kind_param_string(nccl, out, "mode"), "safe");
        {
                const char *env[4];

                CHECK(probe_kind_environment(nccl, out, env, 4) == 2);
                CHECK_STREQ(env[1], "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1");
                CHECK(probe_kind_environment(nccl, out, env, 1) == 1);
        }
        json_object_put(out);

        CHECK(check("nccl", "{\"mode\": \"fast\"}", &out, err, sizeof(err)) == -EINVAL);
        CHECK_STREQ(err, "the nccl probe's mode is one of auto, safe, dmabuf, not \"fast\"");
        CHECK(check("nccl", "{\"mode\": [\"safe\"]}", &out, err, sizeof(err)) == -EINVAL);
        CHECK(check("nccl", "{\"ops\": [\"all_reduce\", \"all_reduce\"]}", &out, err, sizeof(err)) ==
              -EINVAL);
        CHECK_STREQ(err, "the nccl probe's ops names all_reduce twice");
        CHECK(check("nccl", "{\"ops\": \"all_reduce\"}", &out, err, sizeof(err)) == -EINVAL);
        CHECK(check("nccl", "{\"ops\": [\"broadcast\"]}", &out, err, sizeof(err)) == -EINVAL);
        CHECK(check("nccl", "{\"env\": [\"NCCL_ALGO=Ring\", \"NCCL_ALGO=Tree\"]}", &out, err, sizeof(err)) ==
              -EINVAL);
        CHECK_STREQ(err, "the nccl probe's env names NCCL_ALGO twice");
        CHECK(check("nccl", "{\"env\": [\"LD_PRELOAD=/tmp/x.so\"]}", &out, err, sizeof(err)) == -EINVAL);
        CHECK_STREQ(err, "the nccl probe's env: only NCCL_ and CUDA_ variables may be set, not LD_PRELOAD");
        CHECK(check("nccl", "{\"min_bytes\": 2097152, \"max_bytes\": 1048576}", &out, err, sizeof(err)) ==
              -EINVAL);
        CHECK_STREQ(err, "the nccl probe's min_bytes is above its max_bytes");
        CHECK(check("nccl", "{\"iters\": 0}", &out, err, sizeof(err)) == -ERANGE);
        /* An unknown name lists what the kind takes, strings and lists too. */
        CHECK(check("nccl", "{\"streams\": 2}", &out, err, sizeof(err)) == -EINVAL);
        CHECK(strstr(err, "mode (environment mode), env (list of NAME=VALUE)") != NULL);
}

static void test_environment_names(void)
{
        char err[256];

        CHECK(probe_check_environment("NCCL_P2P_DISABLE=1", err, sizeof(err)) == 0);
        CHECK(probe_check_environment("CUDA_VISIBLE_DEVICES=0", err, sizeof(err)) == 0);
        CHECK(probe_check_environment("NCCL_SOCKET_IFNAME=", err, sizeof(err)) == 0);
        CHECK(probe_check_environment("NCCL_P2P_DISABLE", err, sizeof(err)) == -EINVAL);
        CHECK(probe_check_environment("=1", err, sizeof(err)) == -EINVAL);
        CHECK(probe_check_environment("NCCL-X=1", err, sizeof(err)) == -EINVAL);
        CHECK(probe_check_environment("PATH=/tmp", err, sizeof(err)) == -EINVAL);
        /* Names that make the helper load or write a file of the network's choosing. */
        CHECK(probe_check_environment("NCCL_NET_PLUGIN=/tmp/evil.so", err, sizeof(err)) == -EINVAL);
        CHECK_STREQ(
                err,
                "NCCL_NET_PLUGIN names a file or a plugin, which a probe does not take from the network");
        CHECK(probe_check_environment("NCCL_TOPO_DUMP_FILE=/etc/passwd", err, sizeof(err)) == -EINVAL);
        CHECK(probe_check_environment("CUDA_INJECTION64_PATH=/tmp/x.so", err, sizeof(err)) == -EINVAL);
        CHECK(probe_check_environment("NCCL_ALGO=Ring\nX", err, sizeof(err)) == -EINVAL);
}

static void test_rdma_gid_index(void)
{
        const struct probe_kind *rdma = probe_kind_find("rdma");
        json_object *out = NULL;
        char storage[32][24], err[256];
        char *argv[32];
        size_t n = 0;

        /* Both sides get it: each names its own table's index. */
        CHECK(check("rdma", "{\"gid_index\": \"3\"}", &out, err, sizeof(err)) == 0);
        CHECK(probe_kind_helper_args(rdma, out, PROBE_SIDE_SERVER, argv, &n, ARRAY_SIZE(argv), storage) ==
              0);
        CHECK(n == 6 && strcmp(argv[4], "--gid-index") == 0 && strcmp(argv[5], "3") == 0);
        json_object_put(out);
        out = NULL;
        n = 0;
        CHECK(check("rdma", NULL, &out, err, sizeof(err)) == 0);
        CHECK(probe_kind_helper_args(rdma, out, PROBE_SIDE_CLIENT, argv, &n, ARRAY_SIZE(argv), storage) ==
              0);
        CHECK(n >= 2 && strcmp(argv[n - 2], "--gid-index") == 0 && strcmp(argv[n - 1], "auto") == 0);
        json_object_put(out);
        out = NULL;
        CHECK(check("rdma", "{\"gid_index\": \"3x\"}", &out, err, sizeof(err)) == -EINVAL);
        CHECK(strstr(err,
                     "the rdma probe's gid_index is '3x': expected auto or a GID index from 0 to 65535") !=
              NULL);
        CHECK(check("rdma", "{\"gid_index\": \"70000\"}", &out, err, sizeof(err)) == -EINVAL);
}

static void test_nccl_helper_args(void)
{
        const struct probe_kind *nccl = probe_kind_find("nccl");
        json_object *out = NULL, *desc, *v;
        char storage[32][24], err[256];
        char *argv[32];
        size_t n = 0;

        CHECK(check("nccl", "{\"ops\": [\"all_gather\"], \"max_bytes\": 1048576}", &out, err, sizeof(err)) ==
              0);
        CHECK(probe_kind_helper_args(nccl, out, PROBE_SIDE_SERVER, argv, &n, ARRAY_SIZE(argv), storage) ==
              0);
        /* Both ranks run the same collectives: everything goes to both sides, mode and env not on
         * the command line. */
        CHECK(n == 14);
        if (n == 14) {
                CHECK_STREQ(argv[2], "--max-bytes");
                CHECK_STREQ(argv[3], "1048576");
                CHECK_STREQ(argv[12], "--op");
                CHECK_STREQ(argv[13], "all_gather");
        }
        /* Set-up time for CUDA on both sides, the init timeout and the data at the floor rate. */
        CHECK(probe_kind_deadline_sec(nccl, out) >= 60 + 30 + 15);
        json_object_put(out);

        desc = probe_param_to_json(&nccl->params[6]);
        CHECK(json_object_object_get_ex(desc, "type", &v) && strcmp(json_object_get_string(v), "list") == 0);
        CHECK(json_object_object_get_ex(desc, "choices", &v) && json_object_array_length(v) == 2);
        CHECK(json_object_object_get_ex(desc, "default", &v) && json_object_array_length(v) == 2);
        json_object_put(desc);
}

int main(void)
{
        RUN(test_table);
        RUN(test_params);
        RUN(test_helper_args);
        RUN(test_nccl_params);
        RUN(test_environment_names);
        RUN(test_nccl_helper_args);
        RUN(test_rdma_gid_index);
        return test_result();
}
