/* The job plan as sparkrun's cluster file and spark-vllm-docker's .env (launcher_export.h). */
#include "launcher_export.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "macro.h"
#include "text_escape.h"

#define REFUSE(...) (snprintf(why, size, __VA_ARGS__), -EINVAL)

int launcher_format_from_string(const char *s, enum launcher_format *out)
{
        if (strcmp(s, "sparkrun") == 0)
                *out = LAUNCHER_SPARKRUN;
        else if (strcmp(s, "svd") == 0)
                *out = LAUNCHER_SVD;
        else
                return -EINVAL;
        return 0;
}

static const char *text_of(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

static bool is_ifname(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > 15)
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      strchr("._-", *s)))
                        return false;
        return true;
}

static bool is_variable_name(const char *s)
{
        if (!*s || strlen(s) >= 64)
                return false;
        for (; *s; s++)
                if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
                      *s == '_'))
                        return false;
        return true;
}

static int read_node(json_object *e, size_t rank, struct launcher_node *n, char *why, size_t size)
{
        const char *name = text_of(e, "name"), *address = text_of(e, "address"),
                   *ifname = text_of(e, "ifname");
        struct in_addr in;
        json_object *self;

        if (!name || !address || inet_pton(AF_INET, address, &in) != 1)
                return REFUSE("the plan's rank %zu has no IPv4 address", rank);
        /* A name comes from another node and reaches a terminal in refusals and the gate's
         * report: control bytes as '?'. */
        snprintf(n->name, sizeof(n->name), "%s", name);
        for (char *c = n->name; *c; c++)
                if ((unsigned char)*c < ' ' || *c == 0x7f)
                        *c = '?';
        snprintf(n->address, sizeof(n->address), "%s", address);
        if (ifname && is_ifname(ifname))
                snprintf(n->ifname, sizeof(n->ifname), "%s", ifname);
        n->is_self = json_object_object_get_ex(e, "self", &self) && json_object_get_boolean(self);
        return 0;
}

/* NCCL_IB_HCA's devices, without the exact-match '=' and the ports: IB_IF's form. */
static int ib_if_of(const char *hca, char *out, size_t out_size)
{
        size_t len = 0;

        if (*hca == '=')
                hca++;
        if (*hca == '^' || !*hca)
                return -EINVAL;
        out[0] = '\0';
        while (*hca) {
                size_t n = strcspn(hca, ":,");
                int w;

                w = snprintf(out + len, out_size - len, "%s%.*s", len ? "," : "", (int)n, hca);
                if (w < 0 || (size_t)w >= out_size - len)
                        return -E2BIG;
                len += (size_t)w;
                hca += n;
                hca += strcspn(hca, ",");
                if (*hca == ',')
                        hca++;
        }
        return 0;
}

static int read_env(json_object *env, struct launcher_plan *p, char *why, size_t size)
{
        json_object *vars = NULL, *topology = NULL, *v;

        if (json_object_object_get_ex(env, "topology", &topology) && topology) {
                const char *shape = text_of(topology, "shape");

                snprintf(p->shape, sizeof(p->shape), "%s", shape ? shape : "");
                if (json_object_object_get_ex(topology, "nodes", &v))
                        p->shape_nodes = json_object_get_int(v);
        }
        json_object_object_get_ex(env, "variables", &vars);
        for (size_t i = 0; vars && i < json_object_array_length(vars); i++) {
                json_object *e = json_object_array_get_idx(vars, i);
                const char *name = text_of(e, "name"), *value = text_of(e, "value");
                struct launcher_variable *l;

                if (!name || !value || !is_variable_name(name))
                        return REFUSE("env: variable %zu has no name of letters, digits and '_'", i);
                if (strcmp(name, "NCCL_IB_HCA") == 0 && ib_if_of(value, p->ib_if, sizeof(p->ib_if)) < 0)
                        return REFUSE("env: NCCL_IB_HCA is not a list of devices to use");
                if (strcmp(name, "MASTER_PORT") == 0)
                        snprintf(p->master_port, sizeof(p->master_port), "%s", value);
                /* IB_IF and ETH_IF carry these two; the per-rank ones are the launcher's. */
                if (strncmp(name, "NCCL_", 5) != 0 || strcmp(name, "NCCL_IB_HCA") == 0 ||
                    strcmp(name, "NCCL_SOCKET_IFNAME") == 0)
                        continue;
                if (p->n_variables == LAUNCHER_MAX_VARIABLES || strlen(value) >= sizeof(l->value))
                        return REFUSE("env: more than %d NCCL variables, or %s longer than %zu bytes",
                                      LAUNCHER_MAX_VARIABLES, name, sizeof(l->value) - 1);
                l = &p->variables[p->n_variables++];
                snprintf(l->name, sizeof(l->name), "%s", name);
                snprintf(l->value, sizeof(l->value), "%s", value);
        }
        return 0;
}

int launcher_plan_read(json_object *plan, json_object *env, struct launcher_plan *p, char *why, size_t size)
{
        json_object *nodes = NULL;
        const char *s;
        int r;

        *p = (struct launcher_plan){ .self_rank = -1 };
        if ((s = text_of(plan, "digest")))
                snprintf(p->digest, sizeof(p->digest), "%s", s);
        if ((s = text_of(plan, "plane")))
                snprintf(p->plane, sizeof(p->plane), "%s", s);
        if ((s = text_of(plan, "error")))
                snprintf(p->error, sizeof(p->error), "%s", s);
        for (const char *c = p->digest; *c; c++)
                if (!strchr("0123456789abcdef", *c))
                        return REFUSE("the plan's digest is not hexadecimal");
        json_object_object_get_ex(plan, "nodes", &nodes);
        for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
                if (p->n_nodes == LAUNCHER_MAX_NODES)
                        return REFUSE("the plan has more than %d members", LAUNCHER_MAX_NODES);
                r = read_node(json_object_array_get_idx(nodes, i), i, &p->nodes[p->n_nodes], why, size);
                if (r < 0)
                        return r;
                if (p->nodes[p->n_nodes].is_self)
                        p->self_rank = (int)p->n_nodes;
                p->n_nodes++;
        }
        return env ? read_env(env, p, why, size) : 0;
}

/* What every format needs: a head and this node a member. */
static int need_plan(const struct launcher_plan *p, char *why, size_t size)
{
        if (p->error[0] || p->n_nodes == 0)
                return REFUSE("the plan has no head: %s", p->error[0] ? p->error : "no members");
        if (!p->digest[0])
                return REFUSE("the plan has no digest");
        return 0;
}

static int sparkrun_topology(const struct launcher_plan *p, const char **topology, char *why, size_t size)
{
        if (strcmp(p->shape, "pair") == 0 || strcmp(p->shape, "switch") == 0) {
                *topology = "switch"; /* sparkrun's "direct" is its "switch" */
                return 0;
        }
        if (strcmp(p->shape, "ring") == 0 && p->shape_nodes == 3 && p->n_nodes == 3) {
                *topology = "ring";
                return 0;
        }
        if (strcmp(p->shape, "ring") == 0 && p->shape_nodes >= 4)
                return REFUSE(
                        "sparkd's cabling map is a ring of %d: sparkrun's ring is three nodes only (its "
                        "set-up and its NCCL overrides), and as a switch its jobs would hang on the "
                        "pairs no cable links; use sparkc env --for on each node instead",
                        p->shape_nodes);
        if (strcmp(p->shape, "ring") == 0)
                return REFUSE("the plan has %zu of the ring's %d nodes: sparkrun's ring needs all three "
                              "(sparkc plan says why a node is left out)",
                              p->n_nodes, p->shape_nodes);
        return REFUSE("sparkd's cabling map is %s: sparkrun takes a switch, two nodes cabled directly, or "
                      "a ring of three",
                      p->shape[0] ? p->shape : "not known (no fabric, or no neighbours seen yet)");
}

bool launcher_sparkrun_name_ok(const char *s)
{
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')) ||
            strlen(s) > LAUNCHER_SPARKRUN_NAME_MAX)
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      *s == '_' || *s == '-'))
                        return false;
        return true;
}

int launcher_write_sparkrun(FILE *out, const struct launcher_plan *p, const char *name, char *why,
                            size_t size)
{
        const char *topology = NULL;
        char description[64];
        int r;

        if (!launcher_sparkrun_name_ok(name))
                return REFUSE("sparkrun takes a cluster name of letters, digits, '_' and '-', a letter or "
                              "digit first, at most %d, not \"%.64s\"",
                              LAUNCHER_SPARKRUN_NAME_MAX, name);
        if ((r = need_plan(p, why, size)) < 0 || (r = sparkrun_topology(p, &topology, why, size)) < 0)
                return r;
        snprintf(description, sizeof(description), "sparkd job plan %s", p->digest);
        fputs("# Written by sparkc export sparkrun from sparkd's job plan; hosts in rank order, the head\n"
              "# first. Check it before a launch: sparkc env --check --for sparkrun FILE\n",
              out);
        fputs("name: ", out);
        escape_yaml(out, name);
        fputs("\ndescription: ", out);
        escape_yaml(out, description);
        fputs("\nhosts:\n", out);
        for (size_t i = 0; i < p->n_nodes; i++) {
                fputs("  - ", out);
                escape_yaml(out, p->nodes[i].address);
                fputc('\n', out);
        }
        fputs("topology: ", out);
        escape_yaml(out, topology);
        /* The plane the plan's addresses are on: the fabric's (cx7) or the management network's. */
        fputs("\ntransfer_interface: ", out);
        escape_yaml(out, strcmp(p->plane, "fabric") == 0 ? "cx7" : "mgmt");
        fputc('\n', out);
        return 0;
}

static int env_line(FILE *out, const char *prefix, const char *name, const char *value, char *why,
                    size_t size)
{
        fprintf(out, "%s%s=", prefix, name);
        if (escape_env_file_value(out, value) < 0)
                return REFUSE("%s%s: \"%.64s\" holds a character other than letters, digits and . , : / = + "
                              "@ _ - (what bash and a quote-stripping reader both read as written)",
                              prefix, name, value);
        fputc('\n', out);
        return 0;
}

int launcher_write_svd(FILE *out, const struct launcher_plan *p, char *why, size_t size)
{
        char nodes[LAUNCHER_MAX_NODES * 17] = "";
        size_t len = 0;
        int r;

        if ((r = need_plan(p, why, size)) < 0)
                return r;
        if (p->self_rank < 0)
                return REFUSE(
                        "this node is not a member of the plan (sparkc plan says why): LOCAL_IP must be "
                        "one of CLUSTER_NODES");
        if (strcmp(p->shape, "ring") == 0 && p->shape_nodes >= 4)
                return REFUSE("sparkd's cabling map is a ring of %d: launch-cluster.sh's config takes no "
                              "per-link map, and one ETH_IF and IB_IF for every rank cannot reach the pairs "
                              "no cable links",
                              p->shape_nodes);
        for (size_t i = 0; i < p->n_nodes; i++) {
                if (!p->nodes[i].ifname[0] || strcmp(p->nodes[i].ifname, p->nodes[0].ifname) != 0)
                        return REFUSE(
                                "ETH_IF is one netdev for every rank, but the plan's %s uses %s and %s "
                                "uses %s: name the netdevs alike (netplan), or use sparkc env --for "
                                "on each node",
                                p->nodes[0].name, p->nodes[0].ifname, p->nodes[i].name,
                                p->nodes[i].ifname[0] ? p->nodes[i].ifname : "no netdev");
                len += (size_t)snprintf(nodes + len, sizeof(nodes) - len, "%s%s", i ? "," : "",
                                        p->nodes[i].address);
        }
        if (!p->ib_if[0])
                return REFUSE("this node's env has no NCCL_IB_HCA (no RDMA port active): IB_IF would be "
                              "guessed again at launch");
        if (!p->master_port[0])
                return REFUSE("the plan has no rendezvous port for this node (sparkc env --for torchrun "
                              "says why)");
        fprintf(out, "# Written by sparkc export svd from sparkd's job plan %s for rank %d.\n", p->digest,
                p->self_rank);
        fprintf(out, "# launch-cluster.sh makes the node it runs on the head: run it on rank 0, %s.\n",
                p->nodes[0].address);
        fputs("# Check it before a launch: sparkc env --check --for svd FILE\n", out);
        if ((r = env_line(out, "", "CLUSTER_NODES", nodes, why, size)) < 0 ||
            (r = env_line(out, "", "LOCAL_IP", p->nodes[p->self_rank].address, why, size)) < 0 ||
            (r = env_line(out, "", "ETH_IF", p->nodes[0].ifname, why, size)) < 0 ||
            (r = env_line(out, "", "IB_IF", p->ib_if, why, size)) < 0 ||
            (r = env_line(out, "", "MASTER_PORT", p->master_port, why, size)) < 0)
                return r;
        for (size_t i = 0; i < p->n_variables; i++)
                if ((r = env_line(out, "CONTAINER_", p->variables[i].name, p->variables[i].value, why,
                                  size)) < 0)
                        return r;
        return 0;
}
