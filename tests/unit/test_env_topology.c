/*
 * `sparkc env` by cabling shape and NCCL version: the spark-twins host (two twins per port) with
 * the topology map of each shape's fixture (pair, ring of 3, ring of 4, switch), under NCCL
 * 2.28.9 (before subnet-aware routing) and 2.30.7 (the first release with it). The expected text
 * is tests/fixtures/topology/expected/env-SHAPE-nccl-VERSION.sh; UPDATE_GOLDEN=1 rewrites it.
 */
#include <stdlib.h>

#include "client/report.h"
#include "common/macro.h"
#include "daemon/fabric/envgen.h"
#include "daemon/fabric/envgen_topology.h"
#include "golden.h"
#include "test.h"
#include "topology_fixture.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must name tests/fixtures/hosts (meson passes it)"
#endif

static const char *const shapes[][2] = {
        { "pair", "pair-1cable" },
        { "ring3", "ring3" },
        { "ring4", "ring4" },
        { "switch", "switch4" },
};
static const char *const versions[] = { "2.28.9", "2.30.7" };

/* The env result and its text for fixture map under NCCL version ("" unknown, NULL: none). */
/* [fabric] ring_merge_nics as the facts carry it: "0", "1" or NULL (auto). */
static const char *ring_merge_nics;

static json_object *env_for(const char *fixture, const char *version, char **text)
{
        struct fabric_facts f;
        json_object *env;
        size_t size = 0;
        FILE *out;

        CHECK(golden_load_host(FIXTURES_DIR "/spark-twins", NULL, &f) == 0);
        f.host.has_nccl = version != NULL;
        snprintf(f.host.nccl_version, sizeof(f.host.nccl_version), "%s", version ? version : "");
        f.topology = topology_fixture_map(fixture, NULL, false, NULL);
        f.ring_merge_nics = ring_merge_nics;
        env = envgen_build(&f, ENV_MODE_AUTO);
        out = open_memstream(text, &size);
        CHECK(report_env(out, out, env, ENV_FORMAT_SH) == 0);
        fclose(out);
        fabric_facts_free(&f);
        return env;
}

static bool has_variable(json_object *env, const char *name)
{
        json_object *vars = json_object_object_get(env, "variables");

        for (size_t i = 0; i < json_object_array_length(vars); i++)
                if (strcmp(json_object_get_string(
                                   json_object_object_get(json_object_array_get_idx(vars, i), "name")),
                           name) == 0)
                        return true;
        return false;
}

static void test_goldens(void)
{
        for (size_t s = 0; s < ARRAY_SIZE(shapes); s++)
                for (size_t v = 0; v < ARRAY_SIZE(versions); v++) {
                        char name[96], *text = NULL;
                        json_object *env = env_for(shapes[s][1], versions[v], &text);

                        snprintf(name, sizeof(name), "env-%s-nccl-%s.sh", shapes[s][0], versions[v]);
                        golden_compare(TOPOLOGY_FIXTURES_DIR "/expected", name, text);
                        free(text);
                        json_object_put(env);
                }
}

/* What each shape sets, and that nothing newer than the installed NCCL is ever set. */
static void test_by_shape_and_version(void)
{
        char *text = NULL;
        json_object *env;

        env = env_for("ring3", "2.30.7", &text);
        CHECK(has_variable(env, "NCCL_IB_SUBNET_AWARE_ROUTING"));
        CHECK(has_variable(env, "NCCL_NET_PLUGIN"));
        CHECK(!has_variable(env, "NCCL_ALGO")); /* every pair of a 3-ring is linked */
        CHECK(!has_variable(env, "NCCL_IB_MERGE_NICS"));
        free(text);
        json_object_put(env);

        env = env_for("ring3", "2.28.9", &text);
        CHECK(!has_variable(env, "NCCL_IB_SUBNET_AWARE_ROUTING"));
        CHECK(!has_variable(env, "NCCL_NET_PLUGIN"));
        CHECK(strstr(text,
                     "NCCL_IB_SUBNET_AWARE_ROUTING=1 not set: the installed NCCL 2.28.9 does not read it "
                     "(2.30.7 or later does)") != NULL);
        free(text);
        json_object_put(env);

        env = env_for("ring4", "2.28.9", &text);
        CHECK(has_variable(env, "NCCL_ALGO"));
        CHECK(has_variable(env, "NCCL_RUNTIME_CONNECT"));
        CHECK(has_variable(env, "NCCL_CUMEM_ENABLE"));
        CHECK(!has_variable(env, "NCCL_IB_MERGE_NICS"));
        CHECK(strstr(text, "NCCL_IB_MERGE_NICS not set: on rings reports disagree") != NULL);
        free(text);
        json_object_put(env);

        /* Where the field disagrees, the owner's setting decides. */
        ring_merge_nics = "0";
        env = env_for("ring4", "2.30.7", &text);
        CHECK(strstr(text, "export NCCL_IB_MERGE_NICS='0'") != NULL);
        free(text);
        json_object_put(env);
        ring_merge_nics = NULL;

        /* Runtime connect came with 2.22.3: an older NCCL gets the ring algorithm only. */
        env = env_for("ring4", "2.21.5", &text);
        CHECK(has_variable(env, "NCCL_ALGO"));
        CHECK(!has_variable(env, "NCCL_RUNTIME_CONNECT"));
        free(text);
        json_object_put(env);

        env = env_for("switch4", "2.30.7", &text);
        CHECK(has_variable(env, "NCCL_IB_MERGE_NICS"));
        CHECK(!has_variable(env, "NCCL_IB_SUBNET_AWARE_ROUTING"));
        free(text);
        json_object_put(env);

        /* Merging twins came with 2.20.3; DMA-BUF registration with 2.13.4. */
        env = env_for("pair-1cable", "2.12.12", &text);
        CHECK(!has_variable(env, "NCCL_IB_MERGE_NICS"));
        CHECK(!has_variable(env, "NCCL_DMABUF_ENABLE"));
        CHECK(has_variable(env, "NCCL_IB_HCA"));
        free(text);
        json_object_put(env);

        /* A version not known: the shape's recent variables are left out, with a note. */
        env = env_for("ring4", "", &text);
        CHECK(!has_variable(env, "NCCL_RUNTIME_CONNECT"));
        CHECK(strstr(text, "NCCL_RUNTIME_CONNECT=1 not set: the installed NCCL's version is not known") !=
              NULL);
        free(text);
        json_object_put(env);

        CHECK_STREQ(envgen_nccl_since("NCCL_IB_SUBNET_AWARE_ROUTING"), "2.30.7");
        CHECK(envgen_nccl_since("NCCL_NOT_A_VARIABLE") == NULL);
}

int main(void)
{
        RUN(test_goldens);
        RUN(test_by_shape_and_version);
        return test_result();
}
