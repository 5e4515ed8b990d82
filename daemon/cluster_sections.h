/*
 * This node's sections of the cluster view, made from what the daemon's modules report: pure
 * functions from their JSON to the section's JSON, so every node writes the same for the same
 * facts. Each is bounded: a section never grows with history, only with ports and peers.
 */
#pragma once

#include <json-c/json.h>
#include <stdint.h>
#include <time.h>

/* Results and alerts kept in a section at most (the newest). */
#define CLUSTER_SECTION_MAX_RESULTS 128
#define CLUSTER_SECTION_MAX_ALERTS  64
#define CLUSTER_FLAP_LOG_SIZE       64
#define CLUSTER_FLAP_LOG_LINKS      32

/* When each link changed, for "flaps in the last hour"; fed with every links list seen. */
struct cluster_flap_log {
        struct {
                char name[16];
                int64_t flaps_seen;
                int64_t at_usec[CLUSTER_FLAP_LOG_SIZE]; /* newest CLUSTER_FLAP_LOG_SIZE changes */
                size_t n, next;
        } links[CLUSTER_FLAP_LOG_LINKS];
        size_t n;
};

/* {name, node_id, version, mode, started_at}: the node's uptime travels with each summary. */
json_object *cluster_section_node(const char *name, const char *node_id, const char *version,
                                  const char *mode, time_t started_wall);
/* {verdict: ok|warning|failed, checks: [{id, status, summary}] of the checks not ok}. */
json_object *cluster_section_doctor(json_object *doctor);
/* [{name, oper: up|down, speed_mbps, mtu, flaps_1h}] from the links method's list; log learns
 * the flaps (now: monotonic microseconds). */
json_object *cluster_section_links(json_object *links, struct cluster_flap_log *log, int64_t now_usec);
/* [{peer_id, peer, kind, at, verdict, ...the kind's numbers}] from the newest result per peer and
 * kind: rtt_median_us; gbps_out and gbps_in (to and from the peer) for tcp and rdma;
 * busbw_gbytes for nccl; path_mtu for pathmtu. */
json_object *cluster_section_results(json_object *latest);
/* [{id, status: warning|failed, subject, summary, since}] of the newest probe results that are
 * degraded or failed. */
json_object *cluster_section_probe_alerts(json_object *latest);
/* The alerts section: the standing problems of the links and peers (health_problems), then the
 * probe alerts (cluster_section_probe_alerts), which are made apart because they change only with
 * the history. */
json_object *cluster_section_alerts(json_object *problems, json_object *probe_alerts);
