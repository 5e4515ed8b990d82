/*
 * The daemon's own API methods: status, version, reload, subscribe, links, peers and metrics,
 * registered with what they read.
 */
#pragma once

#include <stdbool.h>
#include <time.h>

#include "daemon/base/api.h"
#include "daemon/base/store.h"
#include "daemon/config/conf.h"
#include "daemon/export/metrics_writer.h"
#include "daemon/fabric/fabric_api.h"
#include "daemon/host/counter_watch.h"
#include "daemon/host/gid_watch.h"
#include "daemon/host/links.h"
#include "daemon/host/sysctl.h"
#include "daemon/peers/peers.h"
#include "health.h"

/* The status answer but its uptime, as the text it is written as, and what it was made from. */
struct status_kept {
        char *text; /* NULL: not made */
        const void *health;
        uint64_t health_generation;
        uint64_t gid_generation;
        unsigned reloads;
        const struct sparkd_config *config;
        int store_result;
        const char *store_name;
};

/* What the control methods read and do; it must outlive the API server. */
struct control_context {
        struct api_server *api;
        /* The running config and the count of reloads, which the daemon replaces and counts. */
        struct sparkd_config *const *config;
        const unsigned *reloads;
        const char *node_id;
        struct timespec started_monotonic;
        time_t started_wall;
        const char *state_dir;     /* given on the command line, or NULL: the config's */
        const struct store *store; /* NULL: the state directory could not be opened */
        struct gid_watch *gid_watch;
        struct links *links;
        struct sysctl_keeper *sysctls;
        struct peers *peers;
        struct metrics_writer *metrics;
        const struct fabric_api_context *fabric;   /* the doctor, for the status's health */
        struct health_kept *health;                /* the status's health line, kept */
        const struct counter_watch *counter_watch; /* the links' throughput */
        /* The reload method's work: re-reads the config; on errors the running config stays and
         * errors says why. */
        int (*reload)(void *userdata, struct conf_errors *errors);
        void *reload_userdata;
        struct status_kept status; /* the control methods' own */
};

int control_register(struct control_context *context);
/* Frees what the methods kept; the context may be registered again after. */
void control_clear(struct control_context *context);
