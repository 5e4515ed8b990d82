/* The probe schedule: bandwidth pairs by the circle method, all-pairs RTT. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonrpc.h"
#include "macro.h"
#include "probe_internal.h"
#include "proto.h"
#include "rounds.h"
#include "strutil.h"

/* The node ids that take part: this node and every peer that is up, the same set on every node
 * of a healthy cluster. */
static char **schedule_members(struct probes *ps, json_object **peers_json)
{
        char **ids = NULL;
        json_object *list;

        *peers_json = peers_to_json(ps->peers);
        (void)strv_push(&ids, ps->node_id);
        json_object_object_get_ex(*peers_json, "peers", &list);
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i), *state, *id;

                if (json_object_object_get_ex(p, "state", &state) &&
                    strcmp(json_object_get_string(state), "up") == 0 &&
                    json_object_object_get_ex(p, "node_id", &id) && id)
                        (void)strv_push(&ids, json_object_get_string(id));
        }
        return ids;
}

static void schedule_bandwidth(struct probes *ps, time_t now)
{
        struct probe_params pp = { .duration_s = ps->sched_duration,
                                   .streams = ps->sched_streams,
                                   .size = 64 };
        json_object *peers_json;
        char **ids = schedule_members(ps, &peers_json);
        struct rounds *s = NULL;
        uint64_t slot = (uint64_t)now / ps->interval_sec;
        const char *partner = NULL;
        bool is_initiator = false;
        size_t round;

        if (slot == ps->last_slot || strv_length(ids) < 2 || rounds_build(ids, strv_length(ids), &s) < 0 ||
            rounds_count(s) == 0)
                goto out;
        round = rounds_at(s, (uint64_t)now, ps->interval_sec);
        if (rounds_partner(s, round, ps->node_id, &partner, &is_initiator) < 0) {
                ps->last_slot = slot; /* idle this round (odd number of nodes) */
                goto out;
        }
        /* The pair waits its jitter into the slot, the same on both nodes, so pairs of one round
         * do not all start in the same second. */
        if ((uint64_t)now % ps->interval_sec < rounds_jitter(ps->node_id, partner, slot, ps->jitter_sec))
                goto out;
        ps->last_slot = slot;
        if (is_initiator)
                (void)probe_start(ps, "tcp", partner, &pp, NULL, true);
out:
        rounds_free(s);
        strv_free(ids);
        json_object_put(peers_json);
}

static void schedule_rtt(struct probes *ps, time_t now)
{
        struct probe_params pp = { .duration_s = 5, .streams = 1, .size = 64, .count = SCHEDULED_RTT_COUNT };
        json_object *peers_json;
        char **ids;

        if (now - ps->last_rtt_round < (time_t)ps->rtt_interval_sec)
                return;
        ps->last_rtt_round = now;
        ids = schedule_members(ps, &peers_json);
        /* RTT is cheap: every pair, started by the lower id. */
        for (char **id = ids + 1; id && *id; id++)
                if (strcmp(ps->node_id, *id) < 0)
                        (void)probe_start(ps, "rtt", *id, &pp, NULL, true);
        strv_free(ids);
        json_object_put(peers_json);
}

void probe_schedule_tick(struct probes *ps, time_t now)
{
        if (ps->interval_sec)
                schedule_bandwidth(ps, now);
        if (ps->rtt_interval_sec)
                schedule_rtt(ps, now);
}
