/*
 * The fabric's known failure signatures in a bandwidth result. A result with "directions" (the
 * tcp and rdma probes: forward and reverse, each with its rails) is judged per rail and per
 * direction against the facts of this node's rails:
 *   ok                    at or above healthy_gbps;
 *   stale-initialization  within [stale_min_gbps, stale_max_gbps] while the rail's netdev says
 *                         200 Gb/s Ethernet and its PCIe link is trained at 32 GT/s x4: the
 *                         ConnectX-7 degraded initialization no setting fixes (recovery steps
 *                         come with it). Only from what shows it: RDMA write bandwidth on the
 *                         rail (kind rdma), or a tcp result of at least stale_tcp_streams streams
 *                         when that is set. The band is RDMA's; a TCP figure of fewer streams
 *                         is bound by one core and the socket path, not by the NIC;
 *   degraded              any other shortfall, with the numbers and the links' state (a tcp
 *                         figure in the band says it cannot show the stale state, and how to).
 * The facts are this node's (the node that ran the client): its rail is one end of both
 * directions. The peer's end is not seen here; its own doctor shows its links.
 * An episode tracker turns verdicts into alerts: one when a rail and direction to a peer enters
 * stale-initialization, none while it stays there, and the episode ends with an ok verdict.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "inventory/fabric.h"

enum diagnosis_verdict {
        DIAGNOSIS_OK,
        DIAGNOSIS_DEGRADED,
        DIAGNOSIS_STALE_INITIALIZATION,
};

struct diagnosis_thresholds {
        double healthy_gbps;        /* per rail, default 80 (a 100G rail) */
        double stale_min_gbps;      /* default 8 */
        double stale_max_gbps;      /* default 25 */
        unsigned stale_tcp_streams; /* a tcp result of this many streams shows stale; 0: none does */
};

/* "ok", "degraded", "stale-initialization": the stable codes of --json. */
const char *diagnosis_verdict_to_string(enum diagnosis_verdict v);

/* The recovery steps of the stale-initialization state, in order, NULL-terminated. */
extern const char *const diagnosis_recovery_steps[];

/*
 * Judges result (a probe helper's result). Only rails this node's RDMA inventory knows (by
 * netdev or device name) are judged; NULL when there is none, or no "directions". Else {verdict, summary,
 * rails: [{direction, from, to, rail, netdev, gbps, verdict, summary, ethernet_gbps, pcie, pcie_max}],
 * recovery?: [...]}; verdict is the worst (stale-initialization, then degraded, then ok). facts may be NULL:
 * nothing is then known to be a rail.
 */
json_object *diagnosis_classify(json_object *result, const struct fabric_facts *facts,
                                const struct diagnosis_thresholds *t);

struct diagnosis_episodes;

int diagnosis_episodes_new(struct diagnosis_episodes **ret);
void diagnosis_episodes_free(struct diagnosis_episodes *e);
/* Feeds one rail's verdict for a peer; true when it begins a stale-initialization episode (the
 * caller alerts then). An ok verdict ends the episode; degraded leaves it as it is. When it cannot
 * be remembered (no memory) every stale verdict begins one: an alert too many, never too few. */
bool diagnosis_episode_begins(struct diagnosis_episodes *e, const char *peer_id, const char *rail,
                              const char *direction, enum diagnosis_verdict verdict);
