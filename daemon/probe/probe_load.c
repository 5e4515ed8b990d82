#include "probe_load.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "daemon/base/log.h"

bool probe_fabric_busy(const struct probes *ps, char *why, size_t size)
{
        const struct port_counter_list *last;
        const struct port_counter_sample *busiest = NULL;
        double most = 0;

        /* A bandwidth probe of this node's running now, or within the counters' last stretch, is
         * traffic of ours, not a job's. */
        if (!ps->counter_watch || !(ps->busy_gbps > 0) || ps->bandwidth)
                return false;
        last = counter_watch_last(ps->counter_watch);
        for (size_t i = 0; i < last->n; i++)
                for (size_t k = 0; k < 2; k++)
                        if (last->v[i].netdev[0] && last->v[i].gbps_from_usec > ps->bandwidth_ended_usec &&
                            last->v[i].gbps[k] > most) {
                                most = last->v[i].gbps[k];
                                busiest = &last->v[i];
                        }
        if (!busiest || most <= ps->busy_gbps)
                return false;
        snprintf(why, size, "%s carries %.2f Gb/s, more than [probe] busy_gbps %g", busiest->netdev, most,
                 ps->busy_gbps);
        return true;
}

json_object *probe_deferred_result(struct probes *ps, const char *kind, const char *peer_id, const char *why)
{
        json_object *out = json_object_new_object(), *all = NULL, *peer, *name = NULL;
        time_t now = time(NULL);
        char started[32];
        struct tm tm;

        peer = peers_lookup(ps->peers, peer_id, &all);
        if (peer)
                json_object_object_get_ex(peer, "name", &name);
        gmtime_r(&now, &tm);
        strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object_object_add(out, "kind", json_object_new_string(kind));
        json_object_object_add(out, "peer",
                               json_object_new_string(name ? json_object_get_string(name) : peer_id));
        json_object_object_add(out, "peer_id", json_object_new_string(peer_id));
        json_object_object_add(out, "started_at", json_object_new_string(started));
        json_object_object_add(out, "scheduled", json_object_new_boolean(true));
        json_object_object_add(out, "ok", json_object_new_boolean(false));
        json_object_object_add(out, "status", json_object_new_string("deferred"));
        json_object_object_add(out, "deferred_reason", json_object_new_string(why));
        log_notice("scheduled %s probe with %s deferred to its next slot: %s", kind,
                   name ? json_object_get_string(name) : peer_id, why);
        json_object_put(all);
        return out;
}
