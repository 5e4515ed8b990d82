#include "probe_sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "daemon/base/log.h"
#include "probe_load.h"
#include "probe_queue.h"
#include "rounds.h"

#define SCHEDULED_RTT_COUNT 200
/* What a schedule returns when nothing is due until a peer comes up (on_peer_up). */
#define SCHEDULE_NOTHING_DUE UINT64_MAX

/* The node ids that take part: this node and every peer that is up, the same set on every node
 * of a healthy cluster. */
static char **schedule_members(struct probes *ps)
{
        char **ids = NULL, **up = peers_up_ids(ps->peers);

        (void)strv_push(&ids, ps->node_id);
        for (char **id = up; id && *id; id++)
                (void)strv_push(&ids, *id);
        strv_free(up);
        return ids;
}

/* Pairs without a cable between them (two nodes apart on a ring) are not probed: what crosses
 * a third node measures that node's forwarding, not a cable. */
static bool schedule_is_linked(struct probes *ps, const char *peer_id)
{
        return !ps->linked || ps->linked(ps->linked_userdata, peer_id);
}

/* A kind's parameters for a scheduled run: the config's duration and streams where the kind
 * takes them, its defaults for the rest. NULL when the config's values do not fit the kind. */
static json_object *scheduled_params(struct probes *ps, const struct probe_kind *kind)
{
        json_object *given = json_object_new_object(), *checked = NULL;
        char why[256];

        for (const struct probe_param_spec *s = kind->params; s->name; s++) {
                if (strcmp(s->name, "duration_s") == 0)
                        json_object_object_add(given, s->name, json_object_new_int((int)ps->sched_duration));
                else if (strcmp(s->name, "streams") == 0)
                        json_object_object_add(given, s->name, json_object_new_int((int)ps->sched_streams));
                else if (strcmp(s->name, "count") == 0 && !kind->is_bandwidth)
                        json_object_object_add(given, s->name, json_object_new_int(SCHEDULED_RTT_COUNT));
        }
        if (probe_kind_params(kind, given, &checked, why, sizeof(why)) < 0)
                log_warning("scheduled %s probe: %s", kind->name, why);
        json_object_put(given);
        return checked;
}

static void schedule_start(struct probes *ps, const char *kind_name, const char *peer)
{
        const struct probe_kind *kind = probe_kind_find(kind_name);
        json_object *params = kind ? scheduled_params(ps, kind) : NULL;

        if (params)
                (void)probe_start(ps, kind, peer, params, NULL, true);
}

/* The round's kinds with partner, or, while the fabric carries a job, a deferred record of each:
 * the next slot tries again. */
static void schedule_kinds(struct probes *ps, const char *partner)
{
        char why[160];

        if (!probe_fabric_busy(ps, why, sizeof(why))) {
                for (char **k = ps->sched_kinds; k && *k; k++)
                        schedule_start(ps, *k, partner);
                return;
        }
        for (char **k = ps->sched_kinds; k && *k; k++) {
                json_object *deferred = probe_deferred_result(ps, *k, partner, why);

                history_add(ps->history, deferred);
                json_object_put(deferred);
        }
}

/* Looks at the bandwidth schedule now; returns the seconds until it needs another look, or
 * SCHEDULE_NOTHING_DUE alone. */
static uint64_t schedule_bandwidth(struct probes *ps, time_t now)
{
        char **ids = schedule_members(ps);
        struct rounds *s = NULL;
        uint64_t slot = (uint64_t)now / ps->interval_sec;
        uint64_t to_next_slot = (slot + 1) * ps->interval_sec - (uint64_t)now, wait = to_next_slot;
        uint64_t due_in;
        const char *partner = NULL;
        bool is_initiator = false;
        size_t round;

        if (slot == ps->last_slot)
                goto out;
        /* Alone: nothing is due until a peer comes up, which looks again (on_peer_up). */
        if (strv_length(ids) < 2 || rounds_build(ids, strv_length(ids), &s) < 0 || rounds_count(s) == 0) {
                wait = SCHEDULE_NOTHING_DUE;
                goto out;
        }
        round = rounds_at(s, (uint64_t)now, ps->interval_sec);
        if (rounds_partner(s, round, ps->node_id, &partner, &is_initiator) < 0 ||
            !schedule_is_linked(ps, partner)) {
                ps->last_slot = slot; /* idle this round (odd number of nodes, or no cable to the partner) */
                goto out;
        }
        /* The pair waits its jitter into the slot, the same on both nodes, so pairs of one round
         * do not all start in the same second; after this node's start, counted from the start. */
        due_in = rounds_wait((uint64_t)now, ps->interval_sec,
                             rounds_jitter(ps->node_id, partner, slot, ps->jitter_sec),
                             (uint64_t)ps->sched_started);
        if (due_in) {
                wait = due_in;
                goto out;
        }
        ps->last_slot = slot;
        /* The kinds run one after another: each waits for the bandwidth slot the one before holds. */
        if (is_initiator)
                schedule_kinds(ps, partner);
out:
        rounds_free(s);
        strv_free(ids);
        return wait;
}

/* Starts the round's probes whose offset is in [from, to], and returns the smallest offset past
 * to (UINT64_MAX: none is left in this round). */
static uint64_t rtt_round_run(struct probes *ps, char **ids, uint64_t from, uint64_t to)
{
        static const char *const kinds[] = { "rtt", "pathmtu" };
        uint64_t next = UINT64_MAX;

        /* RTT is cheap: every linked pair, started by the lower id. The path MTU is measured in the
         * initiator's direction (the answers are small), so every node checks its way to each. */
        for (char **id = ids + 1; id && *id; id++) {
                if (!schedule_is_linked(ps, *id))
                        continue;
                for (size_t k = 0; k < ARRAY_SIZE(kinds); k++) {
                        uint64_t at = rounds_light_offset(ps->node_id, *id, kinds[k], ps->rtt_interval_sec);

                        if (k == 0 && strcmp(ps->node_id, *id) > 0)
                                continue;
                        if (at >= from && at <= to)
                                schedule_start(ps, kinds[k], *id);
                        else if (at > to && at < next)
                                next = at;
                }
        }
        return next;
}

/* Looks at the rtt schedule now; returns the seconds until it needs another look, or
 * SCHEDULE_NOTHING_DUE alone. */
static uint64_t schedule_rtt(struct probes *ps, time_t now)
{
        char **ids;
        uint64_t elapsed, next, wait;
        bool alone;

        if (now < ps->last_rtt_round)
                ps->last_rtt_round = now; /* the clock set back: the round starts over */
        elapsed = (uint64_t)(now - ps->last_rtt_round);
        if (elapsed >= ps->rtt_interval_sec) {
                /* Rounds keep their cadence from the start, also over the ones nobody was there for. */
                elapsed %= ps->rtt_interval_sec;
                ps->last_rtt_round = now - (time_t)elapsed;
                ps->rtt_round_done = 0;
        }
        ids = schedule_members(ps);
        alone = strv_length(ids) < 2;
        next = UINT64_MAX;
        if (ps->rtt_round_done <= elapsed) {
                next = rtt_round_run(ps, ids, ps->rtt_round_done, elapsed);
                ps->rtt_round_done = elapsed + 1;
        }
        strv_free(ids);
        if (alone)
                return SCHEDULE_NOTHING_DUE;
        wait = ps->rtt_interval_sec - elapsed;
        return next < ps->rtt_interval_sec && next - elapsed < wait ? next - elapsed : wait;
}

/* The timer wakes only when something may be due: the next rtt round, the bandwidth round's
 * slot or its pair's jitter into it; never with both schedules off, nor without a peer up. */
static void on_tick(evutil_socket_t fd, short what, void *userdata)
{
        struct probes *ps = userdata;
        time_t now = time(NULL);
        uint64_t wait = SCHEDULE_NOTHING_DUE, w;

        if (ps->interval_sec)
                wait = schedule_bandwidth(ps, now);
        if (ps->rtt_interval_sec && (w = schedule_rtt(ps, now)) < wait)
                wait = w;
        if (wait == SCHEDULE_NOTHING_DUE)
                return;
        /* time() counts whole seconds: a wait of 0 would spin within the second. */
        evtimer_add(ps->tick, &(struct timeval){ .tv_sec = (time_t)(wait ? wait : 1) });
}

/* A look a second after the peer is up, as at start: its side of the hello is done too. */
static void on_peer_up(struct probes *ps)
{
        probe_schedule_start(ps);
}

int probe_schedule_new(struct probes *ps)
{
        ps->on_peer_up = on_peer_up;
        ps->tick = evtimer_new(ps->base, on_tick, ps);
        if (!ps->tick)
                return -ENOMEM;
        /* RTT rounds start one interval after start, when the peers had time to come up; the
         * bandwidth round of the slot it starts in, its jitter after start. */
        ps->sched_started = time(NULL);
        ps->last_rtt_round = ps->sched_started;
        ps->rtt_round_done = UINT64_MAX;
        return 0;
}

static bool has_peer_up(struct probes *ps)
{
        char **ids = schedule_members(ps);
        bool up = strv_length(ids) >= 2;

        strv_free(ids);
        return up;
}

void probe_schedule_start(struct probes *ps)
{
        event_del(ps->tick);
        /* Alone (as every node is at start) nothing can be due: a peer that comes up starts it. */
        if ((ps->interval_sec || ps->rtt_interval_sec) && has_peer_up(ps))
                evtimer_add(ps->tick, &(struct timeval){ .tv_sec = 1 });
}

void probe_schedule_free(struct probes *ps)
{
        if (ps->tick)
                event_free(ps->tick);
        ps->tick = NULL;
}
