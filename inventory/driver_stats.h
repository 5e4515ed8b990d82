/*
 * A netdev's driver statistics, as `ethtool -S` shows them: the names and values the driver
 * keeps besides the generic netdev statistics (mlx5: pause frames, rx_discards_phy,
 * link_down_events_phy, rx_out_of_buffer; veth: peer_ifindex and its queues' XDP counts). Read
 * through the SIOCETHTOOL ioctl in the caller's network namespace: ETHTOOL_GSSET_INFO for how
 * many, ETHTOOL_GSTRINGS for their names, ETHTOOL_GSTATS for the values.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define DRIVER_STAT_NAME_MAX 32 /* ETH_GSTRING_LEN */
/* More than any driver has (mlx5 with many queues has a few thousand); a bound on the memory. */
#define DRIVER_STATS_MAX 16384

struct driver_stat {
        char name[DRIVER_STAT_NAME_MAX + 1];
        uint64_t value;
};

struct driver_stats {
        struct driver_stat *v;
        size_t n;
};

/* -ENODEV: no such netdev here; -EOPNOTSUPP: its driver keeps no statistics; -E2BIG past
 * DRIVER_STATS_MAX; -EAGAIN when the driver's count changed between the calls; other errors of
 * the ioctl as they come. */
int driver_stats_read(const char *ifname, struct driver_stats *out);
/* The text of `ethtool -S` ("     name: value" lines after a "NIC statistics:" header, as
 * fixtures keep it). -EINVAL on a line of another form. */
int driver_stats_parse(const char *text, struct driver_stats *out);
void driver_stats_free(struct driver_stats *s);
/* The statistic named name; NULL when the driver has none such. */
const struct driver_stat *driver_stats_find(const struct driver_stats *s, const char *name);
