#include "cluster_feed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster_sections.h"
#include "collective_section.h"
#include "config.h"
#include "daemon/base/clock.h"
#include "daemon/base/heap_trim.h"
#include "health.h"

struct cluster_feed {
        struct cluster_feed_sources s;
        struct event *soon;
        int64_t doctor_at;  /* monotonic usec of the last doctor run; 0: never */
        int64_t updated_at; /* monotonic usec the sections were last made; 0: never */
        bool is_updating;
        bool is_behind; /* an event came since they were made, while no peer was up */
        /* The history's generation the results section was made from (0: none yet), and the
         * probe alerts made with it: the newest results are a parse of the history, which changes
         * a few times a minute, while the sections are made every heartbeat. */
        uint64_t results_generation;
        json_object *probe_alerts;
        struct cluster_flap_log flaps;
};

static int64_t now_usec(void)
{
        return (int64_t)clock_monotonic_usec();
}

static void update_doctor(struct cluster_feed *f, int64_t now)
{
        json_object *doctor = NULL, *addresses = NULL;

        if (fabric_api_node_sections(f->s.fabric, &doctor, &addresses) < 0)
                doctor = addresses = NULL;
        f->doctor_at = now;
        (void)cluster_set_section(f->s.cluster, "doctor", cluster_section_doctor(doctor));
        /* A node's addresses for the job plan (job_plan.h): they change with the same facts. */
        if (addresses)
                (void)cluster_set_section(f->s.cluster, "addresses", addresses);
        json_object_put(doctor);
        /* The doctor reads every node's sections into trees made and freed at each run, every
         * 2 s, and what it keeps (its verdict, the sections above) is made last, above them: at
         * 64 nodes some 1.1 MiB of the heap that glibc cannot give back by itself. A trim in
         * HEAP_TRIM_DELAY_USEC would come as the next run touches them again, and a node read at
         * any moment held them half the time. */
        heap_trim_now();
}

static void update_results(struct cluster_feed *f)
{
        struct history *history = probes_history(f->s.probes);
        uint64_t generation = history_generation(history);
        json_object *latest, *collective;

        if (generation == f->results_generation)
                return;
        latest = history_latest(history);
        json_object_put(f->probe_alerts);
        f->probe_alerts = cluster_section_probe_alerts(latest);
        if (cluster_set_section_lazily(f->s.cluster, "results", cluster_section_results(latest)) >= 0)
                f->results_generation = generation;
        collective = collective_section(latest);
        if (collective)
                (void)cluster_set_section_lazily(f->s.cluster, "collective", collective);
        json_object_put(latest);
}

void cluster_feed_update(struct cluster_feed *f)
{
        const struct sparkd_config *config = *f->s.config;
        json_object *links = links_to_json(f->s.links), *peers = peers_to_json(f->s.peers);
        json_object *problems = health_problems(links, peers);
        int64_t now = now_usec();

        f->is_updating = true;
        f->is_behind = false;
        f->updated_at = now;
        (void)cluster_set_section(f->s.cluster, "node",
                                  cluster_section_node(config->node_name, f->s.node_id, SPARKD_VERSION,
                                                       enforce_mode_to_string(config->mode),
                                                       f->s.started_wall));
        (void)cluster_set_section(f->s.cluster, "links", cluster_section_links(links, &f->flaps, now));
        update_results(f);
        (void)cluster_set_section(f->s.cluster, "alerts", cluster_section_alerts(problems, f->probe_alerts));
        /* Put before the doctor reads its own: at 64 nodes the peers' list is some 250 KiB. */
        json_object_put(links);
        json_object_put(peers);
        json_object_put(problems);
        if (!f->doctor_at || now - f->doctor_at >= CLUSTER_FEED_DOCTOR_USEC)
                update_doctor(f, now);
        f->is_updating = false;
}

void cluster_feed_freshen(struct cluster_feed *f)
{
        int64_t now = now_usec();

        /* Every event pokes, so with none since they were made only what changes without an
         * event can be behind, and the doctor, which reads most of it, runs every 2 s at most
         * anyway. Otherwise a client that asks often (a watch) would have the newest results read
         * back from the history and every section written out again for each call. */
        if (!f->is_behind && !evtimer_pending(f->soon, NULL) && f->updated_at &&
            now - f->updated_at < CLUSTER_FEED_DOCTOR_USEC)
                return;
        event_del(f->soon);
        cluster_feed_update(f);
}

struct nodes_walk {
        struct cluster *cluster;
        json_object *list;
};

static void add_node(const char *node_id, const char *name, uint64_t age_usec, bool is_stale, void *userdata)
{
        struct nodes_walk *w = userdata;
        json_object *o = json_object_new_object();

        json_object_object_add(o, "node_id", json_object_new_string(node_id));
        json_object_object_add(o, "name", json_object_new_string(name));
        json_object_object_add(o, "self",
                               json_object_new_boolean(strcmp(node_id, cluster_self_id(w->cluster)) == 0));
        json_object_object_add(o, "stale", json_object_new_boolean(is_stale));
        json_object_object_add(o, "age_s", json_object_new_int64((int64_t)(age_usec / 1000000)));
        json_object_object_add(o, "doctor", cluster_get_section(w->cluster, node_id, "doctor", NULL, NULL));
        json_object_object_add(o, "addresses",
                               cluster_get_section(w->cluster, node_id, "addresses", NULL, NULL));
        json_object_array_add(w->list, o);
}

json_object *cluster_feed_nodes(struct cluster_feed *f)
{
        struct nodes_walk w = { .cluster = f->s.cluster, .list = json_object_new_array() };

        cluster_feed_freshen(f);
        cluster_foreach_node(f->s.cluster, add_node, &w);
        return w.list;
}

static void on_soon(evutil_socket_t fd, short what, void *userdata)
{
        cluster_feed_update(userdata);
}

void cluster_feed_poke(struct cluster_feed *f)
{
        struct timeval tv = { .tv_sec = 0, .tv_usec = CLUSTER_FEED_POKE_USEC };

        if (!f || f->is_updating)
                return;
        /* With no peer up nobody reads the sections but this node's API, which makes them when
         * it reads them and they are behind; a peer coming up gets them fresh. So an idle node
         * does not wake for them. */
        if (cluster_peers_up(f->s.cluster) == 0) {
                f->is_behind = true;
                return;
        }
        if (!evtimer_pending(f->soon, NULL))
                evtimer_add(f->soon, &tv);
}

static void on_refresh(void *userdata)
{
        cluster_feed_update(userdata);
}

int cluster_feed_new(struct event_base *base, const struct cluster_feed_sources *sources,
                     struct cluster_feed **ret)
{
        struct cluster_feed *f = calloc(1, sizeof(*f));

        if (!f)
                return -ENOMEM;
        f->s = *sources;
        f->soon = evtimer_new(base, on_soon, f);
        if (!f->soon) {
                free(f);
                return -ENOMEM;
        }
        cluster_set_refresh_hook(f->s.cluster, on_refresh, f);
        *ret = f;
        return 0;
}

void cluster_feed_free(struct cluster_feed *f)
{
        if (!f)
                return;
        cluster_set_refresh_hook(f->s.cluster, NULL, NULL);
        json_object_put(f->probe_alerts);
        event_free(f->soon);
        free(f);
}

bool cluster_feed_name_is_shared(const char *name, void *feed)
{
        struct cluster_feed *f = feed;

        return cluster_name_count(f->s.cluster, name) > 1;
}

json_object *cluster_feed_name_clashes(void *feed)
{
        struct cluster_feed *f = feed;

        return cluster_name_clashes(f->s.cluster);
}
