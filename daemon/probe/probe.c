#include "probe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/proto.h"
#include "common/strutil.h"
#include "probe_exchange.h"
#include "probe_internal.h"
#include "probe_queue.h"
#include "probe_sched.h"
#include "probe_table.h"

struct history *probes_history(struct probes *ps)
{
        return ps->history;
}

void probes_set_facts_source(struct probes *ps, probes_facts_fn gather, void *userdata)
{
        ps->gather_facts = gather;
        ps->facts_userdata = userdata;
}

void probes_set_counter_watch(struct probes *ps, const struct counter_watch *watch)
{
        ps->counter_watch = watch;
}

void probes_set_link_filter(struct probes *ps, probes_linked_fn linked, void *userdata)
{
        ps->linked = linked;
        ps->linked_userdata = userdata;
}

/* ---- set-up ---- */

int probes_new(struct event_base *base, struct peers *peers, struct store *store, const char *node_id,
               struct probes **ret)
{
        struct probes *ps = calloc(1, sizeof(*ps));
        int r;

        if (!ps)
                return -ENOMEM;
        ps->base = base;
        ps->peers = peers;
        snprintf(ps->node_id, sizeof(ps->node_id), "%s", node_id);
        LIST_INIT(&ps->probes);
        r = history_new(base, store, 1000, &ps->history);
        if (r >= 0)
                r = diagnosis_episodes_new(&ps->episodes);
        if (r >= 0)
                r = probe_schedule_new(ps);
        if (r < 0) {
                probes_free(ps);
                return r;
        }
        probe_exchange_attach(ps, probe_start_next);
        *ret = ps;
        return 0;
}

void probes_free(struct probes *ps)
{
        if (!ps)
                return;
        probe_exchange_detach(ps);
        while (!LIST_EMPTY(&ps->probes)) {
                struct probe *p = LIST_FIRST(&ps->probes);

                if (p->req) {
                        api_request_reply_error(p->req, RPC_INTERNAL_ERROR, "sparkd is stopping", NULL);
                        p->req = NULL;
                }
                probe_free(p);
        }
        /* Helpers of ended probes may still run, and their callbacks get ps. */
        child_abandon_all(ps);
        probe_schedule_free(ps);
        strv_free(ps->sched_kinds);
        history_free(ps->history);
        json_object_put(ps->rail_verdicts);
        diagnosis_episodes_free(ps->episodes);
        free(ps);
}

int probes_configure(struct probes *ps, const struct sparkd_config *c)
{
        snprintf(ps->helper_dir, sizeof(ps->helper_dir), "%s", c->probe_helper_dir);
        snprintf(ps->host_root, sizeof(ps->host_root), "%s", c->host_root);
        snprintf(ps->rdma_twins, sizeof(ps->rdma_twins), "%s", c->probe_rdma_twins);
        ps->memory_margin = c->probe_memory_margin;
        ps->bandwidth_nice = c->probe_bandwidth_nice;
        history_set_limit(ps->history, c->probe_history_size);
        for (size_t i = 0; probe_kind_at(i); i++) {
                const struct probe_kind *k = probe_kind_at(i);

                ps->expect[i] = k->configured_expectation ? k->configured_expectation(c) : 0;
        }
        if (strv_copy(c->probe_kinds, &ps->sched_kinds) < 0)
                return -ENOMEM;
        ps->degraded_ratio = c->probe_degraded_ratio;
        ps->busy_gbps = c->probe_busy_gbps;
        ps->diagnosis = (struct diagnosis_thresholds){ .healthy_gbps = c->diagnosis_healthy_gbps,
                                                       .stale_min_gbps = c->diagnosis_stale_min_gbps,
                                                       .stale_max_gbps = c->diagnosis_stale_max_gbps,
                                                       .stale_tcp_streams = c->diagnosis_stale_tcp_streams };
        ps->interval_sec = c->probe_interval_usec / 1000000;
        ps->jitter_sec = c->probe_jitter_usec / 1000000;
        ps->rtt_interval_sec = c->probe_rtt_interval_usec / 1000000;
        ps->sched_duration = c->probe_duration_sec;
        ps->sched_streams = c->probe_streams;
        /* Jitter beyond the interval would skip whole slots. */
        if (ps->interval_sec && ps->jitter_sec >= ps->interval_sec)
                ps->jitter_sec = ps->interval_sec / 2;
        probe_schedule_start(ps);
        return 0;
}
