/*
 * Prometheus text exposition of what sparkd knows: links (state, MTU, flaps, corrections), the
 * fabric ports' error and byte counters, peers (up, MTU mismatch), the latest probe result per
 * peer and kind (with its verdict), the doctor's checks and the GID watch. Served by the metrics method
 * (sparkc metrics) and, when [metrics] textfile is set, written atomically to that file for node_exporter's
 * textfile collector, so any monitoring system watches the cluster (metrics_writer.c does both). The alert
 * rules and the dashboard in contrib/ read these names: rename one there too.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "daemon/host/links.h"
#include "inventory/port_counters.h"

/* What the node knows of itself beyond links, peers and probes. */
struct metrics_node_state {
        json_object *doctor;  /* the doctor's (kept) result, borrowed; NULL: not known */
        uint64_t doctor_runs; /* the doctor's runs since start */
        unsigned gid_changes; /* gid-changed events since start */
        bool env_stale;       /* the GID table changed after an environment was served */
};

/* Renders the exposition text from the links (NULL: none), the fabric ports' counters (NULL:
 * none), the peers method's result, the latest results (history_latest) and the node's state
 * (NULL: not known), all borrowed. */
char *metrics_render(const char *node, const char *version, double uptime_sec,
                     const struct link_states *links, const struct port_counter_list *counters,
                     json_object *peers, json_object *latest, const struct metrics_node_state *state);
