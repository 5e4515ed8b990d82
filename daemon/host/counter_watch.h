/*
 * Whether a fabric port's error counters say it is degrading: the kernel counts since the driver
 * loaded, so one look tells nothing; the watch keeps each port's looks over a window and judges
 * the rise. A counter configured as fatal alarms on any rise (a link that went down, a buffer
 * overrun); a counter with a rate threshold alarms while its rise over the window, per second,
 * is above it (symbol errors of a bad cable). Each alarm is told once per episode: a fatal one
 * ends after a window without a rise, a rate one when the rate is back at or below its
 * threshold. A counter that falls was reset (driver reload, port reset): its looks start over
 * from the new value, without an alarm. A port that vanishes (DGX OS removes the PCI functions
 * of an uncabled port) is forgotten; when it comes back, its first look is a new start. Pure:
 * the looks and the clock are passed in.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "daemon/config/conf.h"
#include "inventory/port_counters.h"

struct counter_thresholds {
        bool fatal[_PORT_COUNTER_MAX];
        double per_sec[_PORT_COUNTER_MAX]; /* 0: no rate threshold */
        uint64_t window_usec;
};

/* The thresholds [counters] sets. */
void counter_thresholds_from_config(const struct sparkd_config *config, struct counter_thresholds *out);

/* An episode begins: what the port-errors event tells. */
struct counter_alert {
        const char *device;
        unsigned port;
        const char *netdev; /* "" when the port has none */
        enum port_counter counter;
        enum port_counter_alarm alarm;
        uint64_t delta;           /* the rise over the window */
        double rate_per_sec;      /* the rise per second over the window */
        double threshold_per_sec; /* 0 for a fatal counter */
        const char *action;       /* what to do about it, one sentence */
};

typedef void (*counter_alert_fn)(const struct counter_alert *alert, void *userdata);

struct counter_watch;

int counter_watch_new(const struct counter_thresholds *thresholds, struct counter_watch **ret);
void counter_watch_free(struct counter_watch *w);
/* New thresholds; episodes under way go on. */
void counter_watch_set_thresholds(struct counter_watch *w, const struct counter_thresholds *thresholds);
/* The clock the daemon's looks are taken with (port_errors.c): CLOCK_MONOTONIC in microseconds. */
uint64_t counter_watch_now_usec(void);
/* Takes one look (now: monotonic microseconds), calling alert once per episode that begins.
 * -ENOMEM only. */
int counter_watch_observe(struct counter_watch *w, const struct port_counter_list *look, uint64_t now_usec,
                          counter_alert_fn alert, void *userdata);
/* Writes the watch's deltas, rates and alarms into the samples of ports it knows. */
void counter_watch_annotate(const struct counter_watch *w, struct port_counter_list *list);
/* The last look, annotated (borrowed until the next observe). */
const struct port_counter_list *counter_watch_last(const struct counter_watch *w);
/* What to do when the counter alarms. */
const char *counter_action(enum port_counter counter);
