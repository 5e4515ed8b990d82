/*
 * The daemon's configuration: an INI file (default /etc/sparkd/sparkd.conf) plus drop-ins in
 * FILE.d/NAME.conf read in name order, layered over built-in defaults. Loading collects every
 * error with its file and line; a config with any error is never applied.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "conf_errors.h"

enum enforce_mode {
        ENFORCE_MODE_ENFORCE,
        ENFORCE_MODE_AUDIT,
};

struct conf_sysctl {
        char *name;  /* net.core.rmem_max */
        char *value; /* NULL: not managed (set to empty in a drop-in to undo a default) */
};

/* Where Debian's lldpd listens (lldpctl_get_default_transport()). */
#define CONF_LLDPD_SOCKET_DEFAULT "/run/lldpd.socket"

struct sparkd_config {
        char *path;        /* the main file asked for */
        bool path_found;   /* false: it did not exist and built-in defaults apply */
        char **files_read; /* main file and drop-ins actually read, NULL-terminated */

        char *node_name;
        enum enforce_mode mode;
        char *state_dir;
        int log_level;

        uint64_t recheck_usec; /* sysctls and link state are re-checked this often */
        /* [daemon] host_root: where sysfs, /proc and /etc are read (not written): "/" on a
         * node, a fixture tree in tests. */
        char *host_root;
        char *sysfs_root;
        char *procfs_root;
        char *etc_root;

        /* [fabric] */
        char **fabric_patterns; /* netdevs managed besides the RDMA-backed ones (globs) */
        char **fabric_down;     /* netdevs kept administratively down */
        char *lldpd_socket;     /* lldpd's control socket, read for the LLDP neighbours */
        unsigned fabric_mtu;
        bool fabric_rdma;    /* no: the fabric is declared without RDMA (TCP sockets only) */
        int ring_merge_nics; /* NCCL_IB_MERGE_NICS on rings and meshes: 0, 1, or -1 (auto: unset) */
        unsigned flap_threshold;
        uint64_t flap_window_usec;

        /* [peers] */
        uint16_t peer_port;
        char *key_file;
        char **static_peers; /* addresses or names */
        bool mdns;
        uint64_t heartbeat_usec;
        uint64_t peer_timeout_usec;
        unsigned peer_max_learned;       /* entries known only from their inbound hello */
        uint64_t peer_forget_after_usec; /* such an entry down this long is dropped */

        /* [cluster]: what the cabling is meant to be, checked against the derived topology */
        char cluster_topology[8];    /* "auto", "pair", "ring", "mesh" or "switch" */
        char cluster_rendezvous[12]; /* the job plan's plane: "auto", "fabric" or "management" */
        unsigned cluster_nodes;      /* 0: no expectation */

        /* [probe] */
        char *probe_helper_dir;
        unsigned probe_history_size;
        double probe_expect_tcp_gbps;   /* 0: learn a baseline */
        double probe_expect_rtt_us;     /* 0: learn a baseline */
        double probe_expect_nccl_busbw; /* GB/s; 0: learn a baseline */
        double probe_expect_rdma_gbps;  /* 0: the port's payload rate, or learn a baseline */
        double probe_degraded_ratio;
        double probe_busy_gbps; /* a fabric link past this defers scheduled bandwidth probes; 0: never */
        /* [diagnosis]: a rail at or above healthy_gbps is ok; one in [stale_min, stale_max] on a
         * 200G link trained at 32 GT/s x4 is in the stale-initialization state. */
        double diagnosis_healthy_gbps;
        double diagnosis_stale_min_gbps;
        double diagnosis_stale_max_gbps;
        /* [diagnosis] stale_tcp_streams: the streams a tcp result needs before its figure may
         * show stale-initialization; 0: only rdma results show it. */
        unsigned diagnosis_stale_tcp_streams;
        uint64_t probe_interval_usec; /* scheduled bandwidth probes; 0: off */
        uint64_t probe_jitter_usec;
        uint64_t probe_rtt_interval_usec; /* all-pairs RTT; 0: off */
        unsigned probe_duration_sec;
        unsigned probe_streams;
        uint64_t probe_memory_margin;  /* bytes a nccl/rdma probe must leave available */
        unsigned probe_bandwidth_nice; /* added to the daemon's niceness for bandwidth helpers */
        char **probe_kinds;            /* the bandwidth kinds a scheduled round runs, in order */
        char probe_rdma_twins[130];    /* "DEV,DEV": the rdma probe's rails together; "" by PCI */

        /* [counters]: the fabric ports' error counters (counter_watch.c) */
        uint64_t counters_period_usec; /* 0: not watched */
        uint64_t counters_window_usec;
        char **counters_fatal;                       /* counter names that alarm on any rise */
        double counters_symbol_error_per_sec;        /* 0: no threshold */
        double counters_link_error_recovery_per_min; /* 0: no threshold */
        double counters_roce_slow_restart_per_sec;   /* 0: no threshold */
        double counters_discards_per_sec;            /* the NIC's drops; 0: no threshold */
        double counters_pause_frames_per_sec;        /* 0: no threshold */

        /* [cluster] */
        uint64_t cluster_forget_after_usec; /* a silent node's summary is dropped after this */
        char *cluster_head; /* the node every job's rendezvous is on; NULL: the first healthy by name */

        /* [metrics] */
        char *metrics_textfile; /* NULL: not written */

        /* [export]: the launchers' files kept current with the job plan */
        char *export_directory;        /* NULL: not written */
        char export_sparkrun_name[65]; /* "": "sparkd" */

        /* [sysctl]: name (dotted) and wanted value, in file order; a later file replaces */
        struct conf_sysctl *sysctls;
        size_t n_sysctls;

        char *socket_path;
        mode_t socket_mode;
        char *socket_group; /* NULL: leave the socket's group alone */
        gid_t socket_gid;
        char *admin_group; /* NULL: only root may call state-changing methods */
        gid_t admin_gid;
        unsigned max_clients;
        unsigned reserved_admin_clients;
        unsigned max_clients_per_uid;
};

const char *enforce_mode_to_string(enum enforce_mode mode);

#define CONF_MTU_MIN 1280
#define CONF_MTU_MAX 9978

/* [probe] memory_margin's default, the free memory a nccl or rdma probe must leave: room for
 * the OS, the page cache the node needs to stay responsive, and what NCCL or the verbs library
 * allocate beside the probe's buffers. */
#define CONF_PROBE_MEMORY_MARGIN_DEFAULT (8ULL << 30)

/* [counters] fatal's default: what NVIDIA's NIC health monitor (NVSentinel) treats as fatal on
 * any increment. */
#define CONF_COUNTERS_FATAL_DEFAULT                                                                         \
        "link_downed excessive_buffer_overrun_errors local_link_integrity_errors rnr_nak_retry_err "        \
        "link_down_events_phy"

/* Loads path and its drop-ins. A missing path is an error only when must_exist is set (the user
 * named the file); otherwise defaults apply. Returns 0 and a config, or -EINVAL with errors
 * filled in (each formatted as FILE:LINE: message by conf_error_format). */
int conf_load(const char *path, bool must_exist, struct sparkd_config **ret, struct conf_errors *errors);
void conf_free(struct sparkd_config *config);
