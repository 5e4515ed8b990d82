#include "fabric_wiring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cluster/software_section.h"
#include "daemon/host/lldp_table.h"

static json_object *peers_result(void *peers)
{
        return peers_to_json(peers);
}

static json_object *rail_verdicts(void *probes)
{
        return probes_rail_verdicts(probes);
}

static json_object *firewall_results(void *firewall)
{
        return firewall_check_results(firewall);
}

/* The up nodes' software sections for the consistency check, this node's read now. */
static json_object *software_nodes(void *daemon)
{
        struct sparkd *d = daemon;

        return software_section_nodes(d->cluster, d->config->host_root);
}

/* Every node of the cluster view with its doctor and addresses, this node's made now. */
static json_object *cluster_nodes(void *daemon)
{
        struct sparkd *d = daemon;

        return d->cluster_feed ? cluster_feed_nodes(d->cluster_feed) : NULL;
}

static json_object *topology_map(void *cabling)
{
        return cabling_topology(cabling);
}

static bool pair_is_cabled(void *cabling, const char *peer_id)
{
        return cabling_joins(cabling, peer_id);
}

static char *lldpd_status(void *lldp)
{
        const struct lldp_table *t = lldp_watch_table(lldp);
        char buf[300];

        if (t->status == LLDP_NOT_INSTALLED)
                snprintf(buf, sizeof(buf), "not installed: %s", t->error);
        else
                lldp_table_status(t, buf, sizeof(buf));
        return strdup(buf);
}

/* Everything that reads fabric facts (the GID watch too) reads them from d->fabric_sources. */
void sparkd_wire_fabric_facts(struct sparkd *d)
{
        struct fabric_facts f;

        d->fabric_api = (struct fabric_api_context){
                .sources = &d->fabric_sources,
                .gid_watch = d->gid_watch,
                .peers = peers_result,
                .peers_userdata = d->peers,
                .rail_verdicts = rail_verdicts,
                .rail_verdicts_userdata = d->probes,
                .software_nodes = software_nodes,
                .software_nodes_userdata = d,
                .firewall = firewall_results,
                .firewall_userdata = d->firewall,
                .node_id = d->node_id,
                .cluster_nodes = cluster_nodes,
                .cluster_nodes_userdata = d,
                .lldpd_status = lldpd_status,
                .lldpd_status_userdata = d->lldp,
                .topology = topology_map,
                .topology_userdata = d->cabling,
                .keep = doctor_keep_init(&d->doctor_keep, fabric_api_doctor_run, &d->fabric_api, NULL),
        };
        probes_set_link_filter(d->probes, pair_is_cabled, d->cabling);
        probes_set_facts_source(d->probes, fabric_sources_gather, &d->fabric_sources);
        software_section_publish(d->cluster, d->config->host_root);
        /* The first look: the AER counts every later one is compared with. */
        if (fabric_sources_gather(&d->fabric_sources, &f) == 0)
                fabric_facts_free(&f);
}
