/* A node's netplan file from the map's address plan: its netdevs in name order, each with the
 * addresses the plan gives it and its link's MTU. */
#include "topology_netplan.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "json_get.h"
#include "macro.h"
#include "strutil.h"
#include "text_check.h"
#include "text_escape.h"

static bool is_end_of(json_object *end, const char *node_id)
{
        return end && strcmp(json_get_string(end, "node_id", ""), node_id) == 0;
}

/* "A.B.C.D/N", N from 0 to 32 in its shortest form, short enough for an entry's address. */
static bool is_ipv4_prefix(const char *s)
{
        char buf[INET_ADDRSTRLEN];
        const char *slash = strchr(s, '/');
        struct in_addr a;
        uint64_t prefix;

        if (!slash || (size_t)(slash - s) >= sizeof(buf))
                return false;
        memcpy(buf, s, (size_t)(slash - s));
        buf[slash - s] = '\0';
        return strlen(s) < sizeof(((struct topology_netplan_entry *)NULL)->addresses[0]) &&
               (slash[1] != '0' || !slash[2]) && inet_pton(AF_INET, buf, &a) == 1 &&
               parse_uint64(slash + 1, 10, 0, 32, &prefix) == 0;
}

static struct topology_netplan_entry *entry_for(struct topology_netplan *plan, const char *netdev)
{
        struct topology_netplan_entry *e;

        for (size_t i = 0; i < plan->n_entries; i++)
                if (strcmp(plan->entries[i].netdev, netdev) == 0)
                        return &plan->entries[i];
        if (plan->n_entries >= ARRAY_SIZE(plan->entries) || strlen(netdev) >= sizeof(e->netdev))
                return NULL;
        e = &plan->entries[plan->n_entries++];
        *e = (struct topology_netplan_entry){ 0 };
        snprintf(e->netdev, sizeof(e->netdev), "%s", netdev);
        return e;
}

static void add_link(struct topology_netplan *plan, json_object *link, bool is_a, char *const *own_netdevs)
{
        json_object *twins = json_object_object_get(link, "twin_subnets");
        json_object *end = json_object_object_get(link, is_a ? "a" : "b");
        json_object *other = json_object_object_get(link, is_a ? "b" : "a");
        int mtu = json_object_get_int(json_object_object_get(end, "mtu"));

        /* The addresses are keyed by the ends' names: two ends of one name cannot be told apart. */
        if (strcmp(json_get_string(end, "name", ""), json_get_string(other, "name", "")) == 0)
                return;
        for (size_t i = 0; i < json_object_array_length(twins); i++) {
                json_object *t = json_object_array_get_idx(twins, i);
                const char *netdev = json_get_string(t, is_a ? "a" : "b", "");
                const char *address = json_get_string(json_object_object_get(t, "addresses"),
                                                      json_get_string(end, "name", ""), "");
                struct topology_netplan_entry *e;

                if (!text_is_netdev_name(netdev) || (own_netdevs && !strv_contains(own_netdevs, netdev)) ||
                    !is_ipv4_prefix(address) || !(e = entry_for(plan, netdev)))
                        continue;
                /* An entry is made only for an address it takes: none is left without one. */
                if (e->n_addresses < ARRAY_SIZE(e->addresses))
                        snprintf(e->addresses[e->n_addresses++], sizeof(e->addresses[0]), "%s", address);
                e->mtu = mtu;
        }
}

static int compare_entries(const void *x, const void *y)
{
        return strcmp(((const struct topology_netplan_entry *)x)->netdev,
                      ((const struct topology_netplan_entry *)y)->netdev);
}

static void node_names(json_object *nodes, char *names, size_t size)
{
        names[0] = '\0';
        for (size_t i = 0; i < json_object_array_length(nodes); i++)
                snprintf(names + strlen(names), size - strlen(names), "%s%s", i ? ", " : "",
                         json_get_string(json_object_array_get_idx(nodes, i), "name", ""));
}

int topology_netplan_node_id(json_object *map, const char *node, char *id, size_t id_size, char *why,
                             size_t why_size)
{
        json_object *nodes = json_object_object_get(map, "nodes");
        size_t by_name = 0;
        char names[512];

        id[0] = '\0';
        for (size_t i = 0; i < json_object_array_length(nodes); i++) {
                json_object *n = json_object_array_get_idx(nodes, i);

                if (strcmp(json_get_string(n, "node_id", ""), node) == 0) {
                        snprintf(id, id_size, "%s", node);
                        return 0;
                }
                if (strcmp(json_get_string(n, "name", ""), node) == 0 && by_name++ == 0)
                        snprintf(id, id_size, "%s", json_get_string(n, "node_id", ""));
        }
        if (by_name == 1 && id[0])
                return 0;
        node_names(nodes, names, sizeof(names));
        id[0] = '\0';
        if (by_name > 1) {
                snprintf(why, why_size,
                         "%zu nodes of the topology map are named %s: name one by its node id", by_name,
                         node);
                return -ENOTUNIQ;
        }
        snprintf(why, why_size, "node %s is not in the topology map (its nodes: %s)", node,
                 names[0] ? names : "none");
        return -ENOENT;
}

int topology_netplan_of(json_object *map, const char *node_id, char *const *own_netdevs,
                        struct topology_netplan *out, char *why, size_t why_size)
{
        json_object *nodes = json_object_object_get(map, "nodes"),
                    *links = json_object_object_get(map, "links");
        char names[512];
        bool is_known = false;

        *out = (struct topology_netplan){ 0 };
        if (!node_id)
                node_id = "";
        for (size_t i = 0; node_id[0] && i < json_object_array_length(nodes) && !is_known; i++)
                is_known = is_end_of(json_object_array_get_idx(nodes, i), node_id);
        if (!is_known || strlen(node_id) >= sizeof(out->node_id)) {
                node_names(nodes, names, sizeof(names));
                snprintf(why, why_size, "node %s is not in the topology map (its nodes: %s)", node_id,
                         names[0] ? names : "none");
                return -ENOENT;
        }
        snprintf(out->node_id, sizeof(out->node_id), "%s", node_id);
        for (size_t i = 0; i < json_object_array_length(links); i++) {
                json_object *link = json_object_array_get_idx(links, i);

                if (is_end_of(json_object_object_get(link, "a"), node_id))
                        add_link(out, link, true, own_netdevs);
                else if (is_end_of(json_object_object_get(link, "b"), node_id))
                        add_link(out, link, false, own_netdevs);
        }
        if (!out->n_entries) {
                snprintf(why, why_size,
                         "no link of node %s has addresses in the plan (sparkc topology shows its links)",
                         node_id);
                return -ENODATA;
        }
        qsort(out->entries, out->n_entries, sizeof(out->entries[0]), compare_entries);
        return 0;
}

char *topology_netplan_yaml(const struct topology_netplan *plan)
{
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return NULL;
        fputs("# The fabric addresses of node ", f);
        escape_comment(f, plan->node_id);
        fputs("\n# from sparkd's topology map: one subnet per cable and twin (sparkc topology --netplan).\n"
              "# Every node renders the same plan from the same map.\n"
              "network:\n"
              "  version: 2\n"
              "  ethernets:\n",
              f);
        for (size_t i = 0; i < plan->n_entries; i++) {
                const struct topology_netplan_entry *e = &plan->entries[i];

                fputs("    ", f);
                escape_yaml(f, e->netdev);
                fputs(":\n      addresses:\n", f);
                for (size_t a = 0; a < e->n_addresses; a++) {
                        fputs("        - ", f);
                        escape_yaml(f, e->addresses[a]);
                        fputc('\n', f);
                }
                if (e->mtu > 0)
                        fprintf(f, "      mtu: %d\n", e->mtu);
        }
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        return text;
}
