/* The topology engine on neighbour tables from other nodes: the input is {"tables": [{node_id,
 * name, neighbours}]} as the fixtures are. Every table that parses goes into the map, which must
 * come out byte for byte the same with the tables in reverse order, and render as a table, a dot
 * graph and each node's netplan file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/topology_render.h"
#include "common/json_strict.h"
#include "common/topology_netplan.h"
#include "daemon/fabric/topology.h"
#include "fuzz.h"

#define MAX_TABLES 16

static int derive(struct topology_node **nodes, size_t n, bool is_reversed, char **text)
{
        struct topology_node *ordered[MAX_TABLES];
        const struct topology_expect expect = { .shape = "ring", .nodes = 3 };
        json_object *map = NULL;
        int r;

        for (size_t i = 0; i < n; i++)
                ordered[i] = nodes[is_reversed ? n - 1 - i : i];
        r = topology_derive(ordered, n, &expect, &map);
        if (r < 0) {
                if (r != -E2BIG && r != -ENOMEM)
                        abort();
                return r;
        }
        *text = strdup(json_object_to_json_string(map));
        if (!is_reversed) {
                FILE *null = fopen("/dev/null", "w");
                json_object *list = json_object_object_get(map, "nodes");

                if (!null || topology_render_table(null, map) < 0 || topology_render_dot(null, map) < 0)
                        abort();
                fclose(null);
                for (size_t i = 0; i < json_object_array_length(list); i++) {
                        json_object *node = json_object_array_get_idx(list, i);
                        struct topology_netplan plan;
                        char why[640], *yaml;

                        if (topology_netplan_of(
                                    map, json_object_get_string(json_object_object_get(node, "node_id")),
                                    NULL, &plan, why, sizeof(why)) < 0)
                                continue;
                        yaml = topology_netplan_yaml(&plan);
                        free(yaml);
                }
        }
        json_object_put(map);
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct topology_node *nodes[MAX_TABLES];
        enum json_strict_error error;
        json_object *input = NULL, *tables;
        char why[256], *first = NULL, *second = NULL;
        size_t n = 0;

        if (json_strict_parse((const char *)data, size, 32, &input, &error, why, sizeof(why)) < 0)
                return 0;
        if (json_object_object_get_ex(input, "tables", &tables) &&
            json_object_is_type(tables, json_type_array))
                for (size_t i = 0; i < json_object_array_length(tables) && n < MAX_TABLES; i++) {
                        json_object *t = json_object_array_get_idx(tables, i);
                        const char *id = json_object_get_string(json_object_object_get(t, "node_id"));
                        const char *name = json_object_get_string(json_object_object_get(t, "name"));

                        why[0] = '\0';
                        if (topology_node_parse(id, name, json_object_object_get(t, "neighbours"), &nodes[n],
                                                why, sizeof(why)) == 0)
                                n++;
                        else if (!why[0])
                                abort(); /* every refusal says why */
                }
        if (derive(nodes, n, false, &first) == 0 && derive(nodes, n, true, &second) == 0 &&
            strcmp(first, second) != 0)
                abort(); /* the map depends on the order of the tables */
        free(first);
        free(second);
        for (size_t i = 0; i < n; i++)
                topology_node_free(nodes[i]);
        json_object_put(input);
        return 0;
}
