/* The frameworks' variables: the address each announces, the rendezvous and the rank. The ports
 * are each framework's own default (torchrun 29500, Ray 6379) or, where it has none (SGLang's
 * --dist-init-addr), the one its documentation shows (20000), so nodes agree without asking. */
#include "envgen_frameworks.h"

#include <errno.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
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
        const char *head_name, *head_address, *head_why, *plane;
        char rank[16], nnodes[16];
};

static void add_torchrun(json_object *vars, const struct rendezvous *r)
{
        char port[16];

        snprintf(port, sizeof(port), "%d", TORCHRUN_PORT);
        variable(vars, "MASTER_ADDR", r->head_address,
                 "the rendezvous on %s, the head (%s), at its %s address, the same on every node",
                 r->head_name, r->head_why, r->plane);
        variable(vars, "MASTER_PORT", port, "torchrun's default port, the same on every node");
        variable(vars, "NNODES", r->nnodes, "the members of the job plan (`sparkc plan`)");
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
                 "this node's %s address (%s), for `ray start --node-ip-address=$RAY_NODE_IP_ADDRESS`, "
                 "the one every member reaches: without it Ray picks one itself, Wi-Fi or a bridge too",
                 r->plane, ifname);
        variable(vars, "NNODES", r->nnodes, "the members of the job plan (`sparkc plan`)");
        variable(vars, "NODE_RANK", r->rank,
                 "this node's place: the head (rank 0) first, then the others by name");
}

/* Sets vars' variable name to value with why, in its place when it is there, else at the end. */
static void set_variable(json_object *vars, const char *name, const char *value, const char *why)
{
        for (size_t i = 0; i < json_object_array_length(vars); i++) {
                json_object *v = json_object_array_get_idx(vars, i);
                const char *n = get_string(v, "name");

                if (n && strcmp(n, name) == 0) {
                        json_object_object_add(v, "value", json_object_new_string(value));
                        json_object_object_add(v, "why", json_object_new_string(why));
                        return;
                }
        }
        variable(vars, name, value, "%s", why);
}

/* On the management plane, the socket traffic every node must reach every other node with goes
 * there: NCCL's bootstrap, Gloo, Open MPI's out-of-band channel. The RDMA data does not. */
static void pin_to_management(json_object *vars, json_object *notes, const char *ifname, bool has_rdma)
{
        char value[IF_NAMESIZE + 2], why[512];

        snprintf(value, sizeof(value), "=%s", ifname);
        snprintf(why, sizeof(why),
                 "NCCL's bootstrap on the management network (%s, the default route's), which reaches every "
                 "node; %s",
                 ifname,
                 has_rdma ? "the data stays on the fabric through NCCL_IB_HCA"
                          : "with the socket transport the data goes there too, since NCCL_SOCKET_IFNAME is "
                            "both");
        set_variable(vars, "NCCL_SOCKET_IFNAME", value, why);
        snprintf(why, sizeof(why),
                 "PyTorch's Gloo on the management network (%s): every rank talks to every other", ifname);
        set_variable(vars, "GLOO_SOCKET_IFNAME", ifname, why);
        snprintf(why, sizeof(why),
                 "Open MPI's TCP traffic on the management network (%s), which reaches every node", ifname);
        set_variable(vars, "OMPI_MCA_btl_tcp_if_include", ifname, why);
        if (!has_rdma)
                json_object_array_add(notes, json_object_new_string(
                                                     "the fabric has no RDMA and does not link every pair: "
                                                     "the socket transport runs on the management network"));
}

/* The plan's line in the notes: its digest, its size and head, and the plane with why. */
static void plan_note(json_object *notes, json_object *plan)
{
        json_object *head = NULL, *size = NULL;
        char line[1024];

        json_object_object_get_ex(plan, "head", &head);
        json_object_object_get_ex(plan, "size", &size);
        snprintf(line, sizeof(line), "job plan %s: %d node%s, head %s; rendezvous on %s",
                 get_string(plan, "digest") ? get_string(plan, "digest") : "?", json_object_get_int(size),
                 json_object_get_int(size) == 1 ? "" : "s",
                 get_string(head, "name") ? get_string(head, "name") : "none",
                 get_string(plan, "plane_why") ? get_string(plan, "plane_why") : "?");
        json_object_array_add(notes, json_object_new_string(line));
}

const char *envgen_plan_bootstrap_ifname(json_object *plan)
{
        json_object *self = NULL;
        const char *plane = get_string(plan, "plane");

        json_object_object_get_ex(plan, "self", &self);
        return plane && strcmp(plane, "management") == 0 ? get_string(self, "ifname") : NULL;
}

void envgen_apply_plan(json_object *env, json_object *plan, bool with_note)
{
        json_object *vars, *notes = NULL, *left;
        const char *bootstrap = envgen_plan_bootstrap_ifname(plan),
                   *transport = get_string(env, "transport");

        if (!json_object_object_get_ex(env, "variables", &vars))
                return;
        if (!json_object_object_get_ex(env, "notes", &notes) || !notes) {
                notes = json_object_new_array();
                json_object_object_add(env, "notes", notes);
        }
        json_object_object_add(
                env, "plan_digest",
                get_string(plan, "digest") ? json_object_new_string(get_string(plan, "digest")) : NULL);
        if (json_object_object_get_ex(plan, "left_out", &left))
                json_object_object_add(env, "left_out", json_object_get(left));
        if (bootstrap)
                pin_to_management(vars, notes, bootstrap, !transport || strcmp(transport, "socket") != 0);
        if (with_note)
                plan_note(notes, plan);
}

int envgen_add_framework(json_object *env, enum env_framework framework, json_object *plan)
{
        json_object *vars, *notes = NULL, *head = NULL, *rank = NULL, *size = NULL, *self = NULL;
        struct rendezvous r = { 0 };
        const char *btl = NULL, *own_address, *own_ifname, *plane = get_string(plan, "plane");
        bool is_management = plane && strcmp(plane, "management") == 0;

        json_object_object_add(env, "for", json_object_new_string(env_framework_to_string(framework)));
        if (!json_object_object_get_ex(env, "variables", &vars))
                return refuse(env, "no fabric: nothing to add to");
        envgen_apply_plan(env, plan, false);
        json_object_object_get_ex(env, "notes", &notes);
        json_object_object_get_ex(plan, "self", &self);
        own_address = get_string(self, "address");
        own_ifname = get_string(self, "ifname");
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
                         "TCP traffic; otherwise it tries every netdev, Wi-Fi and container bridges too");
                if (plan)
                        plan_note(notes, plan);
                return 0;
        }
        json_object_object_get_ex(plan, "head", &head);
        json_object_object_get_ex(plan, "rank", &rank);
        json_object_object_get_ex(plan, "size", &size);
        if (!head)
                return refuse(env, get_string(plan, "error") ? get_string(plan, "error") : "no rendezvous");
        if (!rank || !own_address || !own_ifname)
                return refuse(env, "this node is left out of the job's nodes (`sparkc hostfile` says why)");
        r.head_name = get_string(head, "name");
        r.head_address = get_string(head, "address");
        r.head_why = get_string(head, "why");
        r.plane = is_management ? "management" : "fabric";
        if (!r.head_name || !r.head_address || !r.head_address[0] || !r.head_why)
                return refuse(env, "the head's address is not known");
        snprintf(r.rank, sizeof(r.rank), "%d", json_object_get_int(rank));
        snprintf(r.nnodes, sizeof(r.nnodes), "%d", json_object_get_int(size));
        json_object_object_add(env, "rank", json_object_get(rank));
        json_object_object_add(env, "nnodes", json_object_get(size));
        json_object_object_add(env, "head", json_object_get(head));
        plan_note(notes, plan);

        switch (framework) {
        case ENV_FRAMEWORK_TORCHRUN:
                add_torchrun(vars, &r);
                break;
        case ENV_FRAMEWORK_VLLM:
                variable(
                        vars, "VLLM_HOST_IP", own_address,
                        "the address vLLM announces as this node's: its %s address (%s), which every member "
                        "reaches, not whatever the default route picks",
                        r.plane, own_ifname);
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
                         "the address SGLang announces as this node's: its %s address (%s)", r.plane,
                         own_ifname);
                variable(vars, "DIST_INIT_ADDR", endpoint,
                         "for --dist-init-addr: the head %s (%s), port %d on every node", r.head_name,
                         r.head_why, SGLANG_PORT);
                variable(vars, "NNODES", r.nnodes, "for --nnodes: the members of the job plan");
                variable(vars, "NODE_RANK", r.rank,
                         "for --node-rank: the head first, then the others by name");
                break;
        }
        case ENV_FRAMEWORK_MPI:
                break;
        }
        return 0;
}
