/*
 * Prometheus text exposition of what sparkd knows: links (state, MTU, flaps, corrections), the
 * fabric ports' error and byte counters,
 * peers (up, MTU mismatch) and the latest probe result per peer and kind. Served by the metrics
 * method (sparkc metrics) and, when [metrics] textfile is set, written atomically to that file for
 * node_exporter's textfile collector, so any monitoring system watches the cluster
 * (metrics_writer.c does both).
 */
#pragma once

#include <json-c/json.h>

#include "daemon/host/links.h"
#include "inventory/port_counters.h"

/* Renders the exposition text from the links (NULL: none), the fabric ports' counters (NULL:
 * none), the peers method's result and the latest results (history_latest), all borrowed. */
char *metrics_render(const char *node, const char *version, double uptime_sec,
                     const struct link_states *links, const struct port_counter_list *counters,
                     json_object *peers, json_object *latest);
