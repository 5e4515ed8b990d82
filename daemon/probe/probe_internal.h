/* The state of the probe modules: one probe this node takes part in (as its initiator or its
 * responder) and the set of them with the config they run under; for this folder only. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <time.h>

#include "daemon/base/api.h"
#include "daemon/base/child.h"
#include "daemon/config/probe_kinds.h"
#include "daemon/fabric/diagnosis.h"
#include "daemon/host/counter_watch.h"
#include "daemon/peers/peers.h"
#include "history.h"
#include "probe.h"
#include "probe_env.h"

struct probe_helper_ops;

/* Each probe this node runs holds at most one helper process, and with it two pipes to the
 * daemon. Whatever peers ask, no more run at once than these; later ones wait, a bounded number,
 * and past that they are refused with the limit named. */
#define PROBE_RUNNING_MAX      64  /* probes running at once, initiated or answered */
#define PROBE_RUNNING_PER_PEER 4   /* probes one peer has this node answer at once */
#define PROBE_WAITING_PER_PEER 16  /* of one peer's, waiting for a free place */
#define PROBE_WAITING_MAX      128 /* waiting in all, initiated or answered */

struct probe {
        struct probes *owner;
        LIST_ENTRY(probe) link;
        char id[33];
        const struct probe_kind *kind;
        bool is_initiator;
        bool is_queued;
        bool is_scheduled;
        bool is_unavailable; /* this node or the peer lacks what the kind needs */
        bool is_cancelled;   /* by probe-cancel or by its caller leaving: no alert */
        char token[33];
        char peer_id[33];
        char peer_name[64];
        char local[64];
        char remote[64];
        json_object *params; /* every parameter of the kind, checked (probe_kind_params) */
        const char *phase;
        time_t started;
        struct child *child;
        const struct probe_helper_ops *helper_ops; /* who hears what its helper says */
        struct event *deadline;
        struct api_request *req; /* the caller waiting for the answer, NULL when scheduled */
        json_object *result;     /* the helper's final result */
        struct probe_env env;    /* the NCCL environment its helper ran with (kinds with one) */
        char busy[160];          /* the fabric's load when an on-demand probe started; "" idle */
        char error[320];
};

struct probes {
        struct event_base *base;
        struct peers *peers;
        struct history *history;
        char node_id[33];
        char helper_dir[PATH_MAX];
        char host_root[PATH_MAX];       /* where /proc/meminfo is read for the memory guard */
        char rdma_twins[130];           /* [probe] rdma_twins as "DEV,DEV", "" none */
        uint64_t memory_margin;         /* bytes a probe must leave available */
        unsigned bandwidth_nice;        /* added to the daemon's niceness for bandwidth helpers */
        double expect[PROBE_KINDS_MAX]; /* from the config, by kind index; 0: learn a baseline */
        double degraded_ratio;
        struct diagnosis_thresholds diagnosis;
        struct diagnosis_episodes *episodes; /* stale-initialization alerts already given */
        /* probes_rail_verdicts' answer while the history's generation stays: the doctor asks
         * for it every few seconds, and its making parses the newest result of every pair. */
        json_object *rail_verdicts;
        uint64_t rail_verdicts_generation;
        uint64_t interval_sec, jitter_sec, rtt_interval_sec;
        double busy_gbps;                          /* a fabric link above this defers the schedule */
        const struct counter_watch *counter_watch; /* the links' throughput; NULL: never busy */
        uint64_t bandwidth_ended_usec; /* when this node's last bandwidth probe ended (the watch's clock) */
        unsigned sched_duration, sched_streams;
        char **sched_kinds; /* the bandwidth kinds each scheduled round runs, in order */
        LIST_HEAD(, probe) probes;
        struct probe *bandwidth;      /* the one bandwidth probe this node takes part in */
        probes_facts_fn gather_facts; /* this node's fabric facts, for helpers' environments */
        void *facts_userdata;
        probes_linked_fn linked; /* the pairs the schedule probes; NULL: all */
        void *linked_userdata;
        /* The queue's: a probe ended, so the bandwidth slot may be free for a queued one. */
        void (*on_probe_ended)(struct probes *ps);
        /* The schedule's: a peer is up, so a round may be due with it (no timer runs alone). */
        void (*on_peer_up)(struct probes *ps);
        struct event *tick;
        uint64_t last_slot;
        time_t last_rtt_round;
        uint64_t rtt_round_done; /* seconds into that round whose probes have started */
        time_t sched_started;    /* within its slot, a pair's jitter counts from here */
};
