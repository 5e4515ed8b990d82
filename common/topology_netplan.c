/* A node's netplan file from the map's address plan: its netdevs in name order, each with the
 * addresses the plan gives it and its link's MTU. */
#include "topology_netplan.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_get.h"
#include "macro.h"

static bool is_end_of(json_object *end, const char *node)
{
        return end && (strcmp(json_get_string(end, "name", ""), node) == 0 ||
                       strcmp(json_get_string(end, "node_id", ""), node) == 0);
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

static void add_link(struct topology_netplan *plan, json_object *link, bool is_a)
{
        json_object *twins = json_object_object_get(link, "twin_subnets");
        json_object *end = json_object_object_get(link, is_a ? "a" : "b");
        int mtu = json_object_get_int(json_object_object_get(end, "mtu"));

        for (size_t i = 0; i < json_object_array_length(twins); i++) {
                json_object *t = json_object_array_get_idx(twins, i);
                const char *netdev = json_get_string(t, is_a ? "a" : "b", "");
                const char *address = json_get_string(json_object_object_get(t, "addresses"),
                                                      json_get_string(end, "name", ""), "");
                struct topology_netplan_entry *e;

                if (!netdev[0] || !address[0] || !(e = entry_for(plan, netdev)))
                        continue;
                if (e->n_addresses < ARRAY_SIZE(e->addresses) && strlen(address) < sizeof(e->addresses[0]))
                        snprintf(e->addresses[e->n_addresses++], sizeof(e->addresses[0]), "%s", address);
                e->mtu = mtu;
        }
}

static int compare_entries(const void *x, const void *y)
{
        return strcmp(((const struct topology_netplan_entry *)x)->netdev,
                      ((const struct topology_netplan_entry *)y)->netdev);
}

int topology_netplan_of(json_object *map, const char *node, struct topology_netplan *out, char *why,
                        size_t why_size)
{
        json_object *nodes = json_object_object_get(map, "nodes"),
                    *links = json_object_object_get(map, "links");
        char names[512] = "";
        bool is_known = false;

        *out = (struct topology_netplan){ 0 };
        for (size_t i = 0; i < json_object_array_length(nodes); i++) {
                json_object *n = json_object_array_get_idx(nodes, i);

                snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
                         json_get_string(n, "name", ""));
                if (is_end_of(n, node)) {
                        is_known = true;
                        snprintf(out->node, sizeof(out->node), "%s", json_get_string(n, "name", ""));
                }
        }
        if (!is_known) {
                snprintf(why, why_size, "node %s is not in the topology map (its nodes: %s)", node,
                         names[0] ? names : "none");
                return -ENOENT;
        }
        for (size_t i = 0; i < json_object_array_length(links); i++) {
                json_object *link = json_object_array_get_idx(links, i);

                if (is_end_of(json_object_object_get(link, "a"), out->node))
                        add_link(out, link, true);
                else if (is_end_of(json_object_object_get(link, "b"), out->node))
                        add_link(out, link, false);
        }
        if (!out->n_entries) {
                snprintf(why, why_size,
                         "no link of %s has addresses in the plan (sparkc topology shows its links)",
                         out->node);
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
        fprintf(f,
                "# The fabric addresses of %s from sparkd's topology map: one subnet per cable and twin\n"
                "# (sparkc topology --netplan). Every node renders the same plan from the same map.\n"
                "network:\n"
                "  version: 2\n"
                "  ethernets:\n",
                plan->node);
        for (size_t i = 0; i < plan->n_entries; i++) {
                const struct topology_netplan_entry *e = &plan->entries[i];

                fprintf(f, "    %s:\n      addresses:\n", e->netdev);
                for (size_t a = 0; a < e->n_addresses; a++)
                        fprintf(f, "        - %s\n", e->addresses[a]);
                if (e->mtu > 0)
                        fprintf(f, "      mtu: %d\n", e->mtu);
        }
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        return text;
}
