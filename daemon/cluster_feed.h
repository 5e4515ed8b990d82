/*
 * Feeds this node's sections of the cluster view from the daemon's modules: the node, the
 * doctor's verdict, the links, the newest probe results and the alerts. They are made again
 * when the daemon reports an event (a link changed, a probe ended, a peer came or went), and
 * before each refresh the cluster view sends, so facts that change without an event (files under
 * the host root the doctor reads) show within a refresh; the doctor's kept result
 * (doctor_keep.h) is taken at most every 2 s.
 * With no peer up they are made only when this node's API reads them: an idle node stays idle.
 */
#pragma once

#include <event2/event.h>
#include <time.h>

#include "daemon/cluster/cluster.h"
#include "daemon/config/conf.h"
#include "daemon/fabric/fabric_api.h"
#include "daemon/host/links.h"
#include "daemon/peers/peers.h"
#include "daemon/probe/probe.h"

#define CLUSTER_FEED_DOCTOR_USEC 2000000LL
#define CLUSTER_FEED_POKE_USEC   300000LL

struct cluster_feed_sources {
        struct cluster *cluster;
        struct links *links;
        struct peers *peers;
        struct probes *probes;
        const struct fabric_api_context *fabric;
        struct sparkd_config *const *config; /* follows reloads */
        const char *node_id;
        time_t started_wall;
};

struct cluster_feed;

int cluster_feed_new(struct event_base *base, const struct cluster_feed_sources *sources,
                     struct cluster_feed **ret);
void cluster_feed_free(struct cluster_feed *f);
/* Facts may have changed: while a peer is up, the sections are made again within
 * CLUSTER_FEED_POKE_USEC (the doctor when its 2 s are up, else at the next refresh). Pokes while
 * the sections are being made are theirs, and ignored. */
void cluster_feed_poke(struct cluster_feed *f);
/* For the fabric methods (fabric_api.h): whether more than one node id carries name in the
 * cluster view, and those names. */
bool cluster_feed_name_is_shared(const char *name, void *feed);
json_object *cluster_feed_name_clashes(void *feed);
/* Makes every section now; the doctor's again only when its 2 s are up. */
void cluster_feed_update(struct cluster_feed *f);
/* Before the API reads the sections: makes them now unless they are current, that is no poke
 * came since they were made and they were made less than CLUSTER_FEED_DOCTOR_USEC ago. */
void cluster_feed_freshen(struct cluster_feed *f);
/* Every node the cluster view holds, this node's sections freshened first: [{node_id, name, self,
 * stale, age_s, doctor, addresses}] (the sections null when the node has none), for the job plan. */
json_object *cluster_feed_nodes(struct cluster_feed *f);
