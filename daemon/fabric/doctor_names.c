/*
 * The doctor's check of node names: every node is meant to have a name of its own, which people
 * and [cluster] head use. Two node ids with one name are a node set up twice with one name (a
 * cloned image renamed on one side only) or a peer that lies; neither is the head by that name.
 * A warning, not a failure: a peer could otherwise fail every node's doctor by taking a name.
 */
#include <string.h>

#include "doctor_checks.h"

void doctor_check_names(struct check *c, const struct fabric_facts *f)
{
        size_t n = json_object_array_length(f->name_clashes);
        const char *head = NULL;

        check_begin(c, "names");
        for (size_t i = 0; i < n; i++) {
                json_object *clash = json_object_array_get_idx(f->name_clashes, i), *ids, *is_head;
                const char *name = json_object_get_string(json_object_object_get(clash, "name"));
                char list[512] = "";

                ids = json_object_object_get(clash, "node_ids");
                for (size_t k = 0; k < json_object_array_length(ids); k++) {
                        size_t used = strlen(list);

                        snprintf(list + used, sizeof(list) - used, "%s%s", k ? ", " : "",
                                 json_object_get_string(json_object_array_get_idx(ids, k)));
                }
                evidence(c, "%zu nodes are named %s: node ids %s", json_object_array_length(ids), name,
                         list);
                if (json_object_object_get_ex(clash, "head", &is_head) && json_object_get_boolean(is_head))
                        head = name;
        }
        if (head) {
                check_end(c, DOCTOR_WARN,
                          "give each node a name of its own ([daemon] node_name), or find the node that "
                          "should not be there (sparkc cluster)",
                          "[cluster] head is %s, a name more than one node id carries: no node is the head "
                          "by that name, jobs get no rendezvous",
                          head);
                return;
        }
        check_end(c, DOCTOR_WARN,
                  "give each node a name of its own ([daemon] node_name), or find the node that should not "
                  "be there (sparkc cluster)",
                  "%zu name%s more than one node id carries: such a name names no node", n,
                  n == 1 ? "" : "s");
}
