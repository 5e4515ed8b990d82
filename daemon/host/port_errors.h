/*
 * The counter watch on the loop: every fabric port's counters read each [counters] period
 * (inventory/port_counters.h), judged by the watch (counter_watch.h), and a port-errors event
 * for each episode that begins, with the counter, its rise, its rate and what to do. The fabric
 * links without RDMA are read too, for their throughput.
 */
#pragma once

#include <event2/event.h>

#include "counter_watch.h"
#include "daemon/config/conf.h"
#include "links.h"

struct port_errors;

/* links: whose fabric netdevs' byte counters are read beside the RDMA ports' (borrowed). */
int port_errors_new(struct event_base *base, struct links *links, struct port_errors **ret);
void port_errors_free(struct port_errors *p);
/* Takes the sysfs root, period and thresholds; looks at once and re-arms the timer (none when
 * the period is 0, or while there is no port to read). */
int port_errors_configure(struct port_errors *p, const struct sparkd_config *config);
/* A link changed: when no port was there to read (and no timer runs), looks again. */
void port_errors_poke(struct port_errors *p);
/* The watch, for the facts and the metrics. */
struct counter_watch *port_errors_watch(struct port_errors *p);
