/* The frameworks' variables: the address each announces, the rendezvous and the rank. The ports
 * are each framework's own default (torchrun 29500, Ray 6379) or, where it has none (SGLang's
 * --dist-init-addr), the one its documentation shows (20000), so nodes agree without asking. */
#include "envgen_frameworks.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"

#define TORCHRUN_PORT 29500
#define RAY_PORT      6379
#define SGLANG_PORT   20000

static const char *const names[] = {
        [ENV_FRAMEWORK_TORCHRUN] = "torchrun", [ENV_FRAMEWORK_RAY] = "ray", [ENV_FRAMEWORK_VLLM] = "vllm",
        [ENV_FRAMEWORK_SGLANG] = "sglang",     [ENV_FRAMEWORK_MPI] = "mpi",
};

int env_framework_from_string(const char *s, enum env_framework *out)
{
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (strcmp(s, names[i]) == 0) {
                        *out = (enum env_framework)i;
                        return 0;
                }
        return -EINVAL;
}

const char *env_framework_to_string(enum env_framework framework)
{
        return (size_t)framework < ARRAY_SIZE(names) ? names[framework] : "?";
}

const char *env_framework_names(void)
{
        return "torchrun, ray, vllm, sglang, mpi";
}

static void variable(json_object *vars, const char *name, const char *value, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static void variable(json_object *vars, const char *name, const char *value, const char *fmt, ...)
{
        json_object *v = json_object_new_object();
        char why[768];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        json_object_object_add(v, "name", json_object_new_string(name));
        json_object_object_add(v, "value", json_object_new_string(value));
        json_object_object_add(v, "why", json_object_new_string(why));
        json_object_array_add(vars, v);
}

static const char *get_string(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

static int refuse(json_object *env, const char *why)
{
        json_object_object_add(env, "for_refused", json_object_new_string(why));
        return -ENODATA;
}

struct rendezvous {
        const char *head_name, *head_address, *head_why;
        char rank[16], nnodes[16];
};

static void add_torchrun(json_object *vars, const struct rendezvous *r)
{
        char port[16];

        snprintf(port, sizeof(port), "%d", TORCHRUN_PORT);
        variable(vars, "MASTER_ADDR", r->head_address,
                 "the rendezvous on %s, the head (%s), at the fabric address this node reaches it on",
                 r->head_name, r->head_why);
        variable(vars, "MASTER_PORT", port, "torchrun's default port, the same on every node");
        variable(vars, "NNODES", r->nnodes,
                 "the nodes up with a doctor that does not fail (`sparkc hostfile`)");
        variable(vars, "NODE_RANK", r->rank, "this node's place: the head first, then the others by name");
        variable(vars, "PET_MASTER_ADDR", r->head_address,
                 "torchrun reads --master-addr from PET_MASTER_ADDR");
        variable(vars, "PET_MASTER_PORT", port, "torchrun reads --master-port from PET_MASTER_PORT");
        variable(vars, "PET_NNODES", r->nnodes, "torchrun reads --nnodes from PET_NNODES");
        variable(vars, "PET_NODE_RANK", r->rank, "torchrun reads --node-rank from PET_NODE_RANK");
}

static void add_ray(json_object *vars, const struct rendezvous *r, const char *own, const char *ifname)
{
        char address[96];

        snprintf(address, sizeof(address), "%s:%d", r->head_address, RAY_PORT);
        variable(vars, "RAY_ADDRESS", address,
                 "the Ray head on %s (%s) at Ray's default port: `ray start --address=$RAY_ADDRESS` on the "
                 "others (rank 0 runs `ray start --head --port=%d`)",
                 r->head_name, r->head_why, RAY_PORT);
        variable(vars, "RAY_NODE_IP_ADDRESS", own,
                 "this node's fabric address (%s), for `ray start --node-ip-address=$RAY_NODE_IP_ADDRESS`: "
                 "without it Ray announces the address of the default route, the management network or "
                 "Wi-Fi",
                 ifname);
        variable(vars, "NNODES", r->nnodes,
                 "the nodes up with a doctor that does not fail (`sparkc hostfile`)");
        variable(vars, "NODE_RANK", r->rank,
                 "this node's place: the head (rank 0) first, then the others by name");
}

int envgen_add_framework(json_object *env, enum env_framework framework, json_object *plan,
                         const char *own_address, const char *own_ifname)
{
        json_object *vars, *head = NULL, *rank = NULL, *size = NULL;
        struct rendezvous r = { 0 };
        const char *btl = NULL;

        json_object_object_add(env, "for", json_object_new_string(env_framework_to_string(framework)));
        if (!json_object_object_get_ex(env, "variables", &vars))
                return refuse(env, "no fabric: nothing to add to");
        if (!own_address || !own_address[0])
                return refuse(env, "no fabric netdev of this node has an IPv4 address to announce");
        if (framework == ENV_FRAMEWORK_MPI) {
                for (size_t i = 0; i < json_object_array_length(vars); i++) {
                        json_object *v = json_object_array_get_idx(vars, i);
                        const char *name = get_string(v, "name");

                        if (name && strcmp(name, "OMPI_MCA_btl_tcp_if_include") == 0)
                                btl = get_string(v, "value");
                }
                if (!btl)
                        return refuse(env, "no socket netdev chosen for Open MPI (see the notes)");
                variable(vars, "OMPI_MCA_oob_tcp_if_include", btl,
                         "Open MPI's out-of-band channel (mpirun to its daemons) on the same netdevs as its "
                         "TCP "
                         "traffic; otherwise it tries every netdev, Wi-Fi and container bridges too");
                return 0;
        }
        json_object_object_get_ex(plan, "head", &head);
        json_object_object_get_ex(plan, "rank", &rank);
        json_object_object_get_ex(plan, "size", &size);
        if (!head)
                return refuse(env, get_string(plan, "error") ? get_string(plan, "error") : "no rendezvous");
        if (!rank)
                return refuse(env, "this node is left out of the job's nodes (`sparkc hostfile` says why)");
        r.head_name = get_string(head, "name");
        r.head_address = get_string(head, "address");
        r.head_why = get_string(head, "why");
        if (!r.head_name || !r.head_address || !r.head_address[0] || !r.head_why)
                return refuse(env, "the head's fabric address is not known");
        snprintf(r.rank, sizeof(r.rank), "%d", json_object_get_int(rank));
        snprintf(r.nnodes, sizeof(r.nnodes), "%d", json_object_get_int(size));
        json_object_object_add(env, "rank", json_object_get(rank));
        json_object_object_add(env, "nnodes", json_object_get(size));
        json_object_object_add(env, "head", json_object_get(head));

        switch (framework) {
        case ENV_FRAMEWORK_TORCHRUN:
                add_torchrun(vars, &r);
                break;
        case ENV_FRAMEWORK_VLLM:
                variable(vars, "VLLM_HOST_IP", own_address,
                         "the address vLLM announces as this node's: its fabric address (%s), not the one "
                         "of the "
                         "default route",
                         own_ifname);
                /* vLLM runs its nodes as one Ray cluster. */
                add_ray(vars, &r, own_address, own_ifname);
                break;
        case ENV_FRAMEWORK_RAY:
                add_ray(vars, &r, own_address, own_ifname);
                break;
        case ENV_FRAMEWORK_SGLANG: {
                char endpoint[96];

                snprintf(endpoint, sizeof(endpoint), "%s:%d", r.head_address, SGLANG_PORT);
                variable(vars, "SGLANG_HOST_IP", own_address,
                         "the address SGLang announces as this node's: its fabric address (%s)", own_ifname);
                variable(vars, "DIST_INIT_ADDR", endpoint,
                         "for --dist-init-addr: the head %s (%s), port %d on every node", r.head_name,
                         r.head_why, SGLANG_PORT);
                variable(vars, "NNODES", r.nnodes,
                         "for --nnodes: the nodes up with a doctor that does not fail");
                variable(vars, "NODE_RANK", r.rank,
                         "for --node-rank: the head first, then the others by name");
                break;
        }
        case ENV_FRAMEWORK_MPI:
                break;
        }
        return 0;
}
