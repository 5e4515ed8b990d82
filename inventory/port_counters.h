/*
 * The error and traffic counters of every RDMA port, read from sysfs under the host root: the
 * InfiniBand port counters (class/infiniband/DEV/ports/N/counters), the driver's RDMA counters
 * (hw_counters) and the port's netdev statistics (class/net/IF/statistics); and the NIC's own
 * Ethernet counters among the netdev's driver statistics (`ethtool -S`, driver_stats.h: one
 * ioctl set per netdev, in the caller's network namespace). Only the counters in the table below
 * are kept, so one look costs a few small files per port. A counter the kernel or the driver
 * does not offer is left unread, never an error.
 */
#pragma once

#include <json-c/json.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum port_counter {
        /* counters/: the port's link and physical errors */
        PORT_COUNTER_LINK_DOWNED,
        PORT_COUNTER_EXCESSIVE_BUFFER_OVERRUN_ERRORS,
        PORT_COUNTER_LOCAL_LINK_INTEGRITY_ERRORS,
        PORT_COUNTER_SYMBOL_ERROR,
        PORT_COUNTER_LINK_ERROR_RECOVERY,
        PORT_COUNTER_PORT_RCV_ERRORS,
        PORT_COUNTER_PORT_XMIT_DISCARDS,
        /* hw_counters/: RDMA transport trouble */
        PORT_COUNTER_RNR_NAK_RETRY_ERR,
        PORT_COUNTER_ROCE_SLOW_RESTART,
        PORT_COUNTER_OUT_OF_SEQUENCE,
        PORT_COUNTER_PACKET_SEQ_ERR,
        PORT_COUNTER_LOCAL_ACK_TIMEOUT_ERR,
        /* the netdev's statistics/ */
        PORT_COUNTER_RX_CRC_ERRORS,
        PORT_COUNTER_RX_BYTES,
        PORT_COUNTER_TX_BYTES,
        /* the driver's statistics (mlx5's names): what the Ethernet port itself dropped or saw */
        PORT_COUNTER_LINK_DOWN_EVENTS_PHY,
        PORT_COUNTER_RX_DISCARDS_PHY,
        PORT_COUNTER_TX_DISCARDS_PHY,
        PORT_COUNTER_RX_OUT_OF_BUFFER,
        PORT_COUNTER_RX_PAUSE_CTRL_PHY,
        PORT_COUNTER_TX_PAUSE_CTRL_PHY,
        _PORT_COUNTER_MAX,
};

/* The counter's file name ("symbol_error"), which is also its name in the config and metrics. */
const char *port_counter_name(enum port_counter counter);
/* -ENOENT for a name not in the table. */
int port_counter_from_name(const char *name, enum port_counter *out);
/* Where the kernel keeps it: "counters", "hw_counters", "statistics" or "driver" (the
 * netdev's driver statistics). */
const char *port_counter_dir(enum port_counter counter);
/* The byte counters count traffic, not errors: no threshold applies to them. */
bool port_counter_is_traffic(enum port_counter counter);

enum port_counter_alarm {
        PORT_COUNTER_QUIET,
        PORT_COUNTER_DEGRADED, /* its rate is above the threshold */
        PORT_COUNTER_FATAL,    /* a fatal-on-increment counter rose within the window */
};

struct port_counter_sample {
        char device[64];
        unsigned port;
        char netdev[IF_NAMESIZE]; /* "" when the port has none */
        uint64_t values[_PORT_COUNTER_MAX];
        bool has[_PORT_COUNTER_MAX]; /* the kernel offers it and it could be read */
        /* Filled by the daemon's counter watch (counter_watch.c), not by the scan: the rise over
         * its window (-1: no earlier look), that rise per second, and the alarm it raised. */
        int64_t window_delta[_PORT_COUNTER_MAX];
        double rate_per_sec[_PORT_COUNTER_MAX];
        enum port_counter_alarm alarm[_PORT_COUNTER_MAX];
        uint64_t window_usec; /* what the rates were taken over; 0 without a watch */
        /* The netdev's throughput between the watch's last two looks, and the most since it
         * first saw the port, in Gb/s: [0] received, [1] sent. */
        double gbps[2];
        double peak_gbps[2];
        uint64_t gbps_from_usec; /* the look gbps counts from (the watch's clock); 0 none */
};

struct port_counter_list {
        struct port_counter_sample *v;
        size_t n;
};

struct driver_stats;
/* Takes the table's counters that stats (of s's netdev) has. */
void port_counters_take_driver_stats(struct port_counter_sample *s, const struct driver_stats *stats);

/* Every port under SYSFS_ROOT/class/infiniband, by device and port, then each of netdevs (may be
 * NULL) that is no such port's netdev, with its statistics only (device "", port 0): fabric
 * netdevs without RDMA carry traffic too. No devices is an empty list. Fails only with -ENOMEM. */
int port_counters_scan(const char *sysfs_root, char *const *netdevs, struct port_counter_list *out);
void port_counter_list_free(struct port_counter_list *list);
const struct port_counter_sample *port_counter_list_find(const struct port_counter_list *list,
                                                         const char *device, unsigned port);
/* The sample whose netdev is ifname; NULL when none. */
const struct port_counter_sample *port_counter_list_find_netdev(const struct port_counter_list *list,
                                                                const char *ifname);
/* Whether a and b are the same port (an RDMA port by device and port, else by netdev). */
bool port_counter_same_port(const struct port_counter_sample *a, const struct port_counter_sample *b);
