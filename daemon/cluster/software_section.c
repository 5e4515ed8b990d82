#include "software_section.h"

#include "config.h"
#include "daemon/base/log.h"
#include "inventory/software.h"

void software_section_publish(struct cluster *c, const char *host_root)
{
        struct software_facts s;
        json_object *software;

        if (software_read(host_root, &s) < 0)
                return;
        software = software_to_json(&s, SPARKD_VERSION);
        if (software && cluster_set_section(c, "software", software) < 0)
                log_warning("cluster: cannot publish this node's software section: out of memory");
}

struct software_collect {
        struct cluster *cluster;
        json_object *nodes;
};

static void collect_software(const char *node_id, const char *name, uint64_t age_usec, bool is_stale,
                             void *userdata)
{
        struct software_collect *sc = userdata;
        json_object *software = cluster_get_section(sc->cluster, node_id, "software", NULL, NULL), *node;

        /* A stale node is not up: what it runs is not what a job would meet now. */
        if (is_stale || !software) {
                json_object_put(software);
                return;
        }
        node = json_object_new_object();
        json_object_object_add(node, "node_id", json_object_new_string(node_id));
        json_object_object_add(node, "name", name ? json_object_new_string(name) : NULL);
        json_object_object_add(node, "software", software);
        json_object_array_add(sc->nodes, node);
}

json_object *software_section_nodes(struct cluster *c, const char *host_root)
{
        struct software_collect sc = { .cluster = c, .nodes = json_object_new_array() };

        software_section_publish(c, host_root);
        cluster_foreach_node(c, collect_software, &sc);
        return sc.nodes;
}
