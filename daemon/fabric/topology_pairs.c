#include "topology_pairs.h"

#include <string.h>

static const char *end_string(json_object *end, const char *key)
{
        json_object *v;

        return end && json_object_object_get_ex(end, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

/* The switch a link joins node to, or NULL when it does not join node to a switch. */
static const char *switch_of(json_object *a, json_object *b, const char *node)
{
        const char *na = end_string(a, "node_id"), *nb = end_string(b, "node_id");

        if (na && strcmp(na, node) == 0 && end_string(b, "switch"))
                return end_string(b, "switch");
        if (nb && strcmp(nb, node) == 0 && end_string(a, "switch"))
                return end_string(a, "switch");
        return NULL;
}

bool topology_map_joins(json_object *map, const char *node_a, const char *node_b)
{
        json_object *links = NULL;
        size_t n;

        if (!map || !json_object_object_get_ex(map, "links", &links) ||
            !json_object_is_type(links, json_type_array))
                return false;
        n = json_object_array_length(links);
        for (size_t i = 0; i < n; i++) {
                json_object *l = json_object_array_get_idx(links, i), *a = NULL, *b = NULL;
                const char *na, *nb, *sw;

                json_object_object_get_ex(l, "a", &a);
                json_object_object_get_ex(l, "b", &b);
                na = end_string(a, "node_id");
                nb = end_string(b, "node_id");
                if (na && nb &&
                    ((strcmp(na, node_a) == 0 && strcmp(nb, node_b) == 0) ||
                     (strcmp(na, node_b) == 0 && strcmp(nb, node_a) == 0)))
                        return true;
                sw = switch_of(a, b, node_a);
                for (size_t k = 0; sw && k < n; k++) {
                        json_object *m = json_object_array_get_idx(links, k), *ma = NULL, *mb = NULL;
                        const char *other;

                        json_object_object_get_ex(m, "a", &ma);
                        json_object_object_get_ex(m, "b", &mb);
                        other = switch_of(ma, mb, node_b);
                        if (other && strcmp(other, sw) == 0)
                                return true;
                }
        }
        return false;
}
