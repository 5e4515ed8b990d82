/*
 * The daemon as a whole: its configuration, state directory, identity, API server, signal
 * handlers and systemd notifications, all driven by one libevent loop. main.c fills in the
 * options; everything after start-up happens in callbacks on that loop.
 */
#pragma once

#include <event2/event.h>
#include <stdbool.h>
#include <time.h>

#include "cabling.h"
#include "cluster_feed.h"
#include "control.h"
#include "daemon/base/api.h"
#include "daemon/base/log.h"
#include "daemon/base/node_id.h"
#include "daemon/base/recheck.h"
#include "daemon/base/store.h"
#include "daemon/cluster/cluster.h"
#include "daemon/cluster/cluster_api.h"
#include "daemon/cluster/cluster_doctor.h"
#include "daemon/config/conf.h"
#include "daemon/export/launcher_files.h"
#include "daemon/export/metrics_writer.h"
#include "daemon/fabric/fabric_api.h"
#include "daemon/fabric/fabric_gather.h"
#include "daemon/host/aer_watch.h"
#include "daemon/host/gid_watch.h"
#include "daemon/host/links.h"
#include "daemon/host/lldp_watch.h"
#include "daemon/host/port_errors.h"
#include "daemon/host/sysctl.h"
#include "daemon/peers/peers.h"
#include "daemon/probe/collective.h"
#include "daemon/probe/firewall_check.h"
#include "daemon/probe/probe.h"
#include "inventory/fabric.h"

struct sparkd_options {
        const char *config_path;
        bool config_path_explicit; /* -c given: a missing file is then an error */
        const char *socket_path;   /* overrides [api] socket */
        const char *state_dir;     /* overrides [daemon] state_dir */
        bool foreground;
        enum log_target log_target;
};

struct sparkd {
        struct event_base *base;
        struct sparkd_options options;
        struct sparkd_config *config;
        struct store *store; /* NULL when the state directory cannot be used */
        struct api_server *api;
        struct links *links;
        struct sysctl_keeper *sysctls;
        struct peers *peers;
        struct probes *probes;
        struct collective *collective;   /* the NCCL probe across the job plan's nodes */
        struct firewall_check *firewall; /* the ephemeral ports with every up peer */
        struct cluster *cluster;         /* what this node knows of every node */
        struct cluster_feed *cluster_feed;
        struct cluster_doctor *cluster_doctor;
        struct cluster_api_context cluster_api;
        struct lldp_watch *lldp;     /* lldpd's neighbours */
        struct cabling *cabling;     /* the neighbour table and the topology map */
        struct aer_watch *aer_watch; /* AER counts of earlier looks at the fabric facts */
        struct gid_watch *gid_watch;
        struct recheck *recheck; /* one timer for the links', sysctls' and GID tables' rechecks */
        unsigned recheck_links, recheck_sysctls, recheck_gids;
        struct port_errors *port_errors; /* the fabric ports' error counters */
        struct metrics_writer *metrics;
        struct launcher_files *launcher_files; /* [export]: the launchers' files */
        struct fabric_sources fabric_sources;  /* its config follows reloads */
        struct fabric_api_context fabric_api;
        struct doctor_keep doctor_keep; /* the doctor's result for status, metrics, cluster */
        struct health_kept health;
        struct control_context control;
        char node_id[NODE_ID_LEN + 1];
        EVP_PKEY *node_key; /* whose public key node_id names (node_id.h) */
        struct timespec started_monotonic;
        time_t started_wall;
        unsigned reloads;
        struct event *signal_events[4];
        struct event *watchdog;
};

/* Builds the daemon from an already loaded config (which it takes over). listen_fd is a socket
 * passed by systemd, or -1. */
int sparkd_new(const struct sparkd_options *options, struct sparkd_config *config, int listen_fd,
               struct sparkd **ret);
void sparkd_free(struct sparkd *d);
/* Runs the loop until SIGTERM or SIGINT. */
int sparkd_run(struct sparkd *d);
