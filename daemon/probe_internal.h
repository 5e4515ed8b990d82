/* Internals shared by probe.c (running probes), probe_api.c (the API methods) and
 * probe_sched.c (the schedule); not for other modules. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <time.h>

#include "api.h"
#include "child.h"
#include "history.h"
#include "peers.h"
#include "probe.h"

#define MAX_QUEUED          8
#define SETUP_MARGIN_SEC    15 /* on top of the measurement: request, set-up, report */
#define RTT_COUNT_DEFAULT   1000
#define SCHEDULED_RTT_COUNT 200

struct probe_params {
        unsigned duration_s;
        unsigned streams;
        unsigned size;
        unsigned count;
};

struct probe {
        struct probes *owner;
        LIST_ENTRY(probe) link;
        char id[33];
        char kind[8];
        bool is_initiator;
        bool is_bandwidth;
        bool is_queued;
        bool is_scheduled;
        char token[33];
        char peer_id[33];
        char peer_name[64];
        char local[64];
        char remote[64];
        struct probe_params params;
        const char *phase;
        time_t started;
        struct child *child;
        struct event *deadline;
        struct api_request *req; /* the caller waiting for the answer, NULL when scheduled */
        json_object *result;     /* the helper's final result */
        char error[256];
};

struct probes {
        struct event_base *base;
        struct peers *peers;
        struct history *history;
        char node_id[33];
        char helper_dir[PATH_MAX];
        double expect_tcp_gbps, expect_rtt_us, degraded_ratio;
        uint64_t interval_sec, jitter_sec, rtt_interval_sec;
        unsigned sched_duration, sched_streams;
        LIST_HEAD(, probe) probes;
        struct probe *bandwidth; /* the one bandwidth probe this node takes part in */
        struct event *tick;
        uint64_t last_slot;
        time_t last_rtt_round;
};

struct probe *probe_find(struct probes *ps, const char *id, bool initiator);
/* Starts (or queues) a probe; on failure answers req (when given) and returns the error. */
int probe_start(struct probes *ps, const char *kind, const char *peer, const struct probe_params *params,
                struct api_request *req, bool scheduled);
/* Records the result (or error), alerts, answers the caller, frees p, starts the next. */
void probe_finish(struct probe *p, const char *error);
void probe_start_next(struct probes *ps);
/* Tells the waiting caller (if any) what the probe is doing. */
void probe_notify(struct probe *p, const char *phase, const char *message);
/* Reads an optional unsigned member of a params object within [min, max]. */
int param_uint(json_object *params, const char *key, unsigned min, unsigned max, unsigned *out);
/* Runs what the schedule says is due at `now`. */
void probe_schedule_tick(struct probes *ps, time_t now);
