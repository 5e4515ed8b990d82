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
        if (text_of(e, "node_id") && strlen(text_of(e, "node_id")) < sizeof(n->node_id) &&
            strspn(text_of(e, "node_id"), "0123456789abcdef") == strlen(text_of(e, "node_id")))
                snprintf(n->node_id, sizeof(n->node_id), "%s", text_of(e, "node_id"));
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

static int member_of(const struct launcher_plan *p, const char *node_id)
{
        for (size_t i = 0; node_id && node_id[0] && i < p->n_nodes; i++)
                if (strcmp(p->nodes[i].node_id, node_id) == 0)
                        return (int)i;
        return -1;
}

/* The first IPv4 address of node_id's netdev in the map's nodes, without its prefix. */
static bool map_address(json_object *map_nodes, const char *node_id, const char *netdev, char *out,
                        size_t size)
{
        for (size_t i = 0; i < json_object_array_length(map_nodes); i++) {
                json_object *n = json_object_array_get_idx(map_nodes, i), *ports = NULL;

                if (!text_of(n, "node_id") || strcmp(text_of(n, "node_id"), node_id) != 0 ||
                    !json_object_object_get_ex(n, "ports", &ports) ||
                    !json_object_is_type(ports, json_type_array))
                        continue;
                for (size_t j = 0; j < json_object_array_length(ports); j++) {
                        json_object *port = json_object_array_get_idx(ports, j), *addresses = NULL;

                        if (!text_of(port, "netdev") || strcmp(text_of(port, "netdev"), netdev) != 0 ||
                            !json_object_object_get_ex(port, "addresses", &addresses) ||
                            !json_object_is_type(addresses, json_type_array))
                                continue;
                        for (size_t k = 0; k < json_object_array_length(addresses); k++) {
                                const char *a =
                                        json_object_get_string(json_object_array_get_idx(addresses, k));
                                char ip[16];
                                struct in_addr in;

                                if (!a || strcspn(a, "/") >= sizeof(ip))
                                        continue;
                                snprintf(ip, sizeof(ip), "%.*s", (int)strcspn(a, "/"), a);
                                if (inet_pton(AF_INET, ip, &in) == 1) {
                                        snprintf(out, size, "%s", ip);
                                        return true;
                                }
                        }
                }
        }
        return false;
}

int launcher_plan_read_map(json_object *topology, struct launcher_plan *p, char *why, size_t size)
{
        json_object *links = NULL, *map_nodes = NULL;

        p->n_links = 0;
        if (!topology || !json_object_object_get_ex(topology, "links", &links) ||
            !json_object_object_get_ex(topology, "nodes", &map_nodes))
                return 0; /* no map yet: no links */
        if (!json_object_is_type(links, json_type_array) || !json_object_is_type(map_nodes, json_type_array))
                return REFUSE("the cabling map's links or nodes are not lists");
        for (size_t i = 0; i < json_object_array_length(links); i++) {
                json_object *l = json_object_array_get_idx(links, i), *a = NULL, *b = NULL, *twins = NULL;
                int ia, ib;

                if (!json_object_object_get_ex(l, "a", &a) || !json_object_object_get_ex(l, "b", &b))
                        return REFUSE("the cabling map's link %zu has no ends", i);
                ia = member_of(p, text_of(a, "node_id"));
                ib = member_of(p, text_of(b, "node_id"));
                if (ia < 0 || ib < 0 || ia == ib || !json_object_object_get_ex(l, "twin_subnets", &twins) ||
                    !json_object_is_type(twins, json_type_array))
                        continue; /* a switch, or a node the plan leaves out */
                for (size_t t = 0; t < json_object_array_length(twins); t++) {
                        json_object *tw = json_object_array_get_idx(twins, t);
                        struct launcher_link k = { .a = (size_t)ia, .b = (size_t)ib };

                        if (!text_of(tw, "a") || !text_of(tw, "b") ||
                            !map_address(map_nodes, p->nodes[ia].node_id, text_of(tw, "a"), k.a_address,
                                         sizeof(k.a_address)) ||
                            !map_address(map_nodes, p->nodes[ib].node_id, text_of(tw, "b"), k.b_address,
                                         sizeof(k.b_address)))
                                continue; /* a twin without an address at both ends carries nothing */
                        if (p->n_links == LAUNCHER_MAX_LINKS)
                                return REFUSE("the cabling map has more than %d links", LAUNCHER_MAX_LINKS);
                        p->links[p->n_links++] = k;
                }
        }
        return 0;
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

/* A ring of four or more as launch-cluster.sh takes it: CLUSTER_NODES round the ring in cable
 * order, this node first, in the direction the head's lower-ranked neighbour lies; every node of
 * the ring a member and each with two neighbours over addressed cables. */
static int ring_order(const struct launcher_plan *p, size_t *order, char *why, size_t size)
{
        size_t next[LAUNCHER_MAX_NODES][2], n_next[LAUNCHER_MAX_NODES] = { 0 }, prev, cur, n = 0;

        if (p->n_nodes != (size_t)p->shape_nodes)
                return REFUSE("the plan has %zu of the ring's %d nodes: launch-cluster.sh's CLUSTER_LINKS "
                              "must close the ring (sparkc plan says why a node is left out)",
                              p->n_nodes, p->shape_nodes);
        for (size_t i = 0; i < p->n_links; i++) {
                const struct launcher_link *l = &p->links[i];
                size_t ends[2][2] = { { l->a, l->b }, { l->b, l->a } };

                for (int e = 0; e < 2; e++) {
                        size_t from = ends[e][0], to = ends[e][1];
                        bool known = false;

                        for (size_t j = 0; j < n_next[from]; j++)
                                known |= next[from][j] == to;
                        if (known)
                                continue;
                        if (n_next[from] == 2)
                                return REFUSE("%s has cables to more than two nodes: not a ring",
                                              p->nodes[from].name);
                        next[from][n_next[from]++] = to;
                }
        }
        for (size_t i = 0; i < p->n_nodes; i++)
                if (n_next[i] != 2)
                        return REFUSE(
                                "%s has %zu neighbours over cables with an IPv4 address at both ends, a "
                                "ring needs two: launch-cluster.sh's CLUSTER_LINKS names each cable's "
                                "addresses (sparkc topology --netplan gives them)",
                                p->nodes[i].name, n_next[i]);
        /* From the head toward its lower-ranked neighbour, round to the head again. */
        prev = 0;
        cur = next[0][0] < next[0][1] ? next[0][0] : next[0][1];
        order[n++] = 0;
        while (cur != 0 && n < p->n_nodes) {
                size_t to = next[cur][0] == prev ? next[cur][1] : next[cur][0];

                order[n++] = cur;
                prev = cur;
                cur = to;
        }
        if (cur != 0 || n != p->n_nodes)
                return REFUSE("the cables between the plan's nodes make more than one ring");
        /* LOCAL_IP first: launch-cluster.sh makes the node it runs on the head. */
        while (order[0] != (size_t)p->self_rank) {
                size_t first = order[0];

                memmove(order, order + 1, (p->n_nodes - 1) * sizeof(*order));
                order[p->n_nodes - 1] = first;
        }
        return 0;
}

/* CLUSTER_LINKS: JSON of IPv4 addresses only (read and checked with inet_pton), single-quoted,
 * which bash and launch-cluster.sh's quote-stripping reader both take as written. */
static int links_line(FILE *out, const struct launcher_plan *p, char *why, size_t size)
{
        fputs("CLUSTER_LINKS='[", out);
        for (size_t i = 0; i < p->n_links; i++) {
                const struct launcher_link *l = &p->links[i];

                fprintf(out, "%s{\"%s\":\"%s\",\"%s\":\"%s\"}", i ? "," : "", p->nodes[l->a].address,
                        l->a_address, p->nodes[l->b].address, l->b_address);
        }
        fputs("]'\n", out);
        return 0;
}

int launcher_write_svd(FILE *out, const struct launcher_plan *p, char *why, size_t size)
{
        char nodes[LAUNCHER_MAX_NODES * 17] = "";
        size_t len = 0, order[LAUNCHER_MAX_NODES];
        bool is_ring;
        int r;

        if ((r = need_plan(p, why, size)) < 0)
                return r;
        if (p->self_rank < 0)
                return REFUSE(
                        "this node is not a member of the plan (sparkc plan says why): LOCAL_IP must be "
                        "one of CLUSTER_NODES");
        if (strcmp(p->shape, "mixed") == 0)
                return REFUSE("sparkd's cabling map is mixed (a ring with a node missing, or cables of more "
                              "than one kind): launch-cluster.sh would start NCCL between nodes no cable "
                              "links (sparkc topology shows the map)");
        is_ring = strcmp(p->shape, "ring") == 0 && p->shape_nodes >= 4;
        for (size_t i = 0; i < p->n_nodes; i++)
                order[i] = i;
        if (is_ring && (r = ring_order(p, order, why, size)) < 0)
                return r;
        for (size_t k = 0; k < p->n_nodes; k++) {
                size_t i = order[k];

                if (!p->nodes[i].ifname[0] || strcmp(p->nodes[i].ifname, p->nodes[0].ifname) != 0)
                        return REFUSE(
                                "ETH_IF is one netdev for every rank, but the plan's %s uses %s and %s "
                                "uses %s: name the netdevs alike (netplan), or use sparkc env --for "
                                "on each node",
                                p->nodes[0].name, p->nodes[0].ifname, p->nodes[i].name,
                                p->nodes[i].ifname[0] ? p->nodes[i].ifname : "no netdev");
                len += (size_t)snprintf(nodes + len, sizeof(nodes) - len, "%s%s", k ? "," : "",
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
        if (is_ring)
                fprintf(out, "# A ring of %d: CLUSTER_NODES goes round the ring from this node.\n",
                        p->shape_nodes);
        fputs("# Check it before a launch: sparkc env --check --for svd FILE\n", out);
        if ((r = env_line(out, "", "CLUSTER_NODES", nodes, why, size)) < 0 ||
            (r = env_line(out, "", "LOCAL_IP", p->nodes[p->self_rank].address, why, size)) < 0 ||
            (r = env_line(out, "", "ETH_IF", p->nodes[0].ifname, why, size)) < 0 ||
            (r = env_line(out, "", "IB_IF", p->ib_if, why, size)) < 0 ||
            (r = env_line(out, "", "MASTER_PORT", p->master_port, why, size)) < 0 ||
            (is_ring && (r = links_line(out, p, why, size)) < 0))
                return r;
        for (size_t i = 0; i < p->n_variables; i++)
                if ((r = env_line(out, "CONTAINER_", p->variables[i].name, p->variables[i].value, why,
                                  size)) < 0)
                        return r;
        return 0;
}
