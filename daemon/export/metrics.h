/*
 * Prometheus text exposition of what sparkd knows: links (state, MTU, flaps, corrections),
 * peers (up, MTU mismatch) and the latest probe result per peer and kind. Served by the metrics
 * method (sparkc metrics) and, when [metrics] textfile is set, written atomically to that file for
 * node_exporter's textfile collector, so any monitoring system watches the cluster
 * (metrics_writer.c does both).
 */
#pragma once

#include <json-c/json.h>

#include "daemon/host/links.h"

/* Renders the exposition text from the links (NULL: none), the peers method's result and the
 * latest results (history_latest), all borrowed. */
char *metrics_render(const char *node, const char *version, double uptime_sec,
                     const struct link_states *links, json_object *peers, json_object *latest);
