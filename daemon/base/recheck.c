#include "recheck.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

struct recheck_entry {
        recheck_fn fn;
        void *userdata;
        uint64_t interval_usec; /* 0: never due */
        uint64_t due_usec;
};

struct recheck {
        struct event *timer;
        recheck_clock_fn clock;
        struct recheck_entry v[RECHECK_MAX];
        unsigned n;
        uint64_t wakeups;
};

static uint64_t monotonic_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t recheck_next_usec(const struct recheck *rc)
{
        uint64_t next = UINT64_MAX;

        for (unsigned i = 0; i < rc->n; i++)
                if (rc->v[i].interval_usec && rc->v[i].due_usec < next)
                        next = rc->v[i].due_usec;
        return next;
}

static void arm(struct recheck *rc)
{
        uint64_t next = recheck_next_usec(rc), now = rc->clock(), wait;

        event_del(rc->timer);
        if (next == UINT64_MAX)
                return;
        wait = next > now ? next - now : 0;
        event_add(rc->timer, &(struct timeval){ .tv_sec = (time_t)(wait / 1000000),
                                                .tv_usec = (suseconds_t)(wait % 1000000) });
}

void recheck_run_due(struct recheck *rc)
{
        uint64_t now = rc->clock();
        bool due[RECHECK_MAX] = { false };

        rc->wakeups++;
        /* Decided before any check runs: a slow check does not pull the next one in. */
        for (unsigned i = 0; i < rc->n; i++) {
                struct recheck_entry *e = &rc->v[i];

                if (e->interval_usec && e->due_usec <= now + RECHECK_COALESCE_USEC) {
                        due[i] = true;
                        e->due_usec = now + e->interval_usec;
                }
        }
        for (unsigned i = 0; i < rc->n; i++)
                if (due[i])
                        rc->v[i].fn(rc->v[i].userdata);
        arm(rc);
}

static void on_timer(evutil_socket_t fd, short what, void *userdata)
{
        recheck_run_due(userdata);
}

int recheck_new(struct event_base *base, struct recheck **ret)
{
        struct recheck *rc = calloc(1, sizeof(*rc));

        if (!rc)
                return -ENOMEM;
        rc->clock = monotonic_usec;
        rc->timer = evtimer_new(base, on_timer, rc);
        if (!rc->timer) {
                free(rc);
                return -ENOMEM;
        }
        *ret = rc;
        return 0;
}

void recheck_free(struct recheck *rc)
{
        if (!rc)
                return;
        event_free(rc->timer);
        free(rc);
}

void recheck_set_clock(struct recheck *rc, recheck_clock_fn clock)
{
        rc->clock = clock;
        arm(rc);
}

int recheck_add(struct recheck *rc, recheck_fn fn, void *userdata, unsigned *id)
{
        if (rc->n >= RECHECK_MAX)
                return -ENOSPC;
        rc->v[rc->n] = (struct recheck_entry){ .fn = fn, .userdata = userdata };
        *id = rc->n++;
        return 0;
}

void recheck_set_interval(struct recheck *rc, unsigned id, uint64_t interval_usec)
{
        if (id >= rc->n)
                return;
        rc->v[id].interval_usec = interval_usec;
        rc->v[id].due_usec = rc->clock() + interval_usec;
        arm(rc);
}

uint64_t recheck_wakeups(const struct recheck *rc)
{
        return rc->wakeups;
}
