/*
 * One timer for the periodic re-checks of the modules that keep host state (links, sysctls, the
 * GID tables): each registers its check with an interval, and the one timer is set to the
 * earliest check due. Checks due within RECHECK_COALESCE_USEC of the one that fires run in the
 * same wakeup, so modules configured one after another cost the idle daemon one wakeup per
 * interval, not one each. A check with interval 0 is never due; with none due there is no timer.
 */
#pragma once

#include <event2/event.h>
#include <stdint.h>

#define RECHECK_MAX           8
#define RECHECK_COALESCE_USEC 1000000ULL

typedef void (*recheck_fn)(void *userdata);
typedef uint64_t (*recheck_clock_fn)(void);

struct recheck;

int recheck_new(struct event_base *base, struct recheck **ret);
void recheck_free(struct recheck *rc);
/* Another clock than CLOCK_MONOTONIC in microseconds (tests). */
void recheck_set_clock(struct recheck *rc, recheck_clock_fn clock);
/* Registers fn, not due until recheck_set_interval; its handle in *id. -ENOSPC past RECHECK_MAX. */
int recheck_add(struct recheck *rc, recheck_fn fn, void *userdata, unsigned *id);
/* fn is due every interval_usec from now on (0: never). */
void recheck_set_interval(struct recheck *rc, unsigned id, uint64_t interval_usec);
/* When the timer fires next (the clock's microseconds); UINT64_MAX when nothing is due. */
uint64_t recheck_next_usec(const struct recheck *rc);
/* Runs every check due by now (and those due within the coalescing slack), then sets the timer
 * to the next; the timer's own callback. */
void recheck_run_due(struct recheck *rc);
/* How many times the checks were run (wakeups of the timer, or recheck_run_due). */
uint64_t recheck_wakeups(const struct recheck *rc);
