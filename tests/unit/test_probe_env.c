/* The environment NCCL probe helpers run with: `sparkc env`'s variables for the mode, the
 * socket interface pinned to the probe's address, the node facts, the overrides last. */
#include <errno.h>
#include <stdlib.h>

#include "daemon/probe/probe_env.h"
#include "golden.h"
#include "inventory/fabric.h"
#include "test.h"

static const char *source_of(const struct probe_env *e, const char *name)
{
        json_object *vars, *v;

        json_object_object_get_ex(e->description, "variables", &vars);
        for (size_t i = 0; vars && i < json_object_array_length(vars); i++) {
                json_object *var = json_object_array_get_idx(vars, i);

                if (json_object_object_get_ex(var, "name", &v) &&
                    strcmp(json_object_get_string(v), name) == 0 &&
                    json_object_object_get_ex(var, "source", &v))
                        return json_object_get_string(v);
        }
        return NULL;
}

static void test_gb10_with_peermem(void)
{
        struct fabric_facts f;
        struct probe_env e;
        const char *overrides[] = { "NCCL_P2P_DISABLE=1", "NCCL_IB_TIMEOUT=23" };
        json_object *v;

        CHECK(load_host("direct-fabric", &f) == 0);
        /* auto on this node is safe: GB10 with nvidia_peermem and the proprietary driver. */
        CHECK(probe_env_build(&f, ENV_MODE_AUTO, "10.0.0.1", overrides, 2, &e) == 0);
        CHECK_STREQ(probe_env_get(&e, "NCCL_NET_GDR_LEVEL"), "LOC");
        CHECK_STREQ(probe_env_get(&e, "NCCL_DMABUF_ENABLE"), "0");
        CHECK_STREQ(probe_env_get(&e, "NCCL_IB_HCA"), "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
        CHECK_STREQ(source_of(&e, "NCCL_IB_HCA"), "sparkc env");
        /* `sparkc env` lists every fabric netdev; the probe takes the one with its address. */
        CHECK_STREQ(probe_env_get(&e, "NCCL_SOCKET_IFNAME"), "=enp1s0f0np0");
        CHECK_STREQ(source_of(&e, "NCCL_SOCKET_IFNAME"), "probe");
        CHECK_STREQ(probe_env_get(&e, PROBE_ENV_UNIFIED_MEMORY), "1");
        CHECK_STREQ(probe_env_get(&e, PROBE_ENV_RDMA_DEVICES), "mlx5_0,mlx5_1,mlx5_2,mlx5_3");
        /* Overrides come last and replace what came before. */
        CHECK_STREQ(probe_env_get(&e, "NCCL_P2P_DISABLE"), "1");
        CHECK_STREQ(probe_env_get(&e, "NCCL_IB_TIMEOUT"), "23");
        CHECK_STREQ(source_of(&e, "NCCL_IB_TIMEOUT"), "override");
        CHECK(probe_env_get(&e, "NCCL_DEBUG") == NULL);
        CHECK(json_object_object_get_ex(e.description, "mode", &v) &&
              strcmp(json_object_get_string(v), "safe") == 0);
        /* Every entry is NAME=VALUE, each name once. */
        for (char **a = e.entries; *a; a++) {
                CHECK(strchr(*a, '=') != NULL);
                for (char **b = a + 1; *b; b++)
                        CHECK(strncmp(*a, *b, (size_t)(strchr(*a, '=') - *a) + 1) != 0);
        }
        probe_env_free(&e);

        /* dmabuf asked for: GPU Direct RDMA allowed, as `sparkc env --mode dmabuf` says. */
        CHECK(probe_env_build(&f, ENV_MODE_DMABUF, "192.168.0.189", NULL, 0, &e) == 0);
        CHECK_STREQ(probe_env_get(&e, "NCCL_NET_GDR_LEVEL"), "SYS");
        CHECK_STREQ(probe_env_get(&e, "NCCL_DMABUF_ENABLE"), "1");
        CHECK_STREQ(probe_env_get(&e, "NCCL_SOCKET_IFNAME"), "=enP2p1s0f1np1");
        probe_env_free(&e);

        /* An address the node does not hold leaves `sparkc env`'s list. */
        CHECK(probe_env_build(&f, ENV_MODE_SAFE, "10.9.9.9", NULL, 0, &e) == 0);
        CHECK_STREQ(probe_env_get(&e, "NCCL_SOCKET_IFNAME"), "=enp1s0f0np0,enp1s0f1np1,enP2p1s0f1np1");
        probe_env_free(&e);
        fabric_facts_free(&f);
}

static void test_no_fabric(void)
{
        struct fabric_facts f = { 0 };
        struct probe_env e;

        /* A veth in a test namespace: no RDMA, so no `sparkc env` variables, but the socket
         * interface is still pinned and the facts say there is no RDMA to fall back from. */
        CHECK(fabric_facts_add_address(&f, "fa10", "10.99.0.10/24") == 0);
        CHECK(fabric_facts_add_address(&f, "fa", "10.99.0.1/24") == 0);
        CHECK(probe_env_build(&f, ENV_MODE_AUTO, "10.99.0.1", NULL, 0, &e) == 0);
        CHECK_STREQ(probe_env_get(&e, "NCCL_SOCKET_IFNAME"), "=fa");
        CHECK_STREQ(probe_env_get(&e, PROBE_ENV_RDMA_DEVICES), "");
        CHECK_STREQ(probe_env_get(&e, PROBE_ENV_UNIFIED_MEMORY), "0");
        CHECK(probe_env_get(&e, "NCCL_IB_HCA") == NULL);
        probe_env_free(&e);
        /* Whole addresses: 10.99.0.1 is not 10.99.0.10, nor 10.99.0.2 anywhere. */
        CHECK(probe_env_build(&f, ENV_MODE_AUTO, "10.99.0.10", NULL, 0, &e) == 0);
        CHECK_STREQ(probe_env_get(&e, "NCCL_SOCKET_IFNAME"), "=fa10");
        probe_env_free(&e);
        CHECK(probe_env_build(&f, ENV_MODE_AUTO, "10.99.0.2", NULL, 0, &e) == 0);
        CHECK(probe_env_get(&e, "NCCL_SOCKET_IFNAME") == NULL);
        probe_env_free(&e);
        fabric_facts_free(&f);
}

int main(void)
{
        RUN(test_gb10_with_peermem);
        RUN(test_no_fabric);
        return test_result();
}
