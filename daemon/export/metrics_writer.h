/*
 * The metrics of the running daemon: the exposition (metrics.c) rendered from the links, the
 * peers, the probe history, the doctor and the GID watch when asked, and, when [metrics]
 * textfile is set, written to that file every 15 seconds and after every reload.
 */
#pragma once

#include <event2/event.h>
#include <time.h>

#include "daemon/config/conf.h"
#include "daemon/fabric/fabric_api.h"
#include "daemon/host/counter_watch.h"
#include "daemon/host/gid_watch.h"
#include "daemon/host/links.h"
#include "daemon/peers/peers.h"
#include "daemon/probe/probe.h"

struct metrics_sources {
        struct links *links;
        struct peers *peers;
        struct probes *probes;
        struct fabric_api_context *fabric; /* the doctor */
        struct gid_watch *gid_watch;
        const struct counter_watch *counter_watch; /* NULL: no port counters */
        struct timespec started;                   /* CLOCK_MONOTONIC when the daemon started: the uptime */
};

struct metrics_writer;

/* Takes the node name and the textfile from config; the first write comes with the timer. */
int metrics_writer_new(struct event_base *base, const struct metrics_sources *sources,
                       const struct sparkd_config *config, struct metrics_writer **ret);
void metrics_writer_free(struct metrics_writer *w);
/* Takes the node name and the textfile from a new config and writes the textfile now. */
int metrics_writer_configure(struct metrics_writer *w, const struct sparkd_config *config);
/* The exposition now (malloc'ed); NULL without memory. */
char *metrics_writer_text(struct metrics_writer *w);
