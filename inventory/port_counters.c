/*
 * Port counters: one directory listing per device, then one small file per counter per port.
 */
#include "port_counters.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "driver_stats.h"
#include "rdma.h"
#include "sysfs.h"

enum counter_dir {
        DIR_IB,
        DIR_HW,
        DIR_NETDEV,
        DIR_DRIVER,
};

static const struct {
        const char *name;
        enum counter_dir dir;
} counters[_PORT_COUNTER_MAX] = {
        [PORT_COUNTER_LINK_DOWNED] = { "link_downed", DIR_IB },
        [PORT_COUNTER_EXCESSIVE_BUFFER_OVERRUN_ERRORS] = { "excessive_buffer_overrun_errors", DIR_IB },
        [PORT_COUNTER_LOCAL_LINK_INTEGRITY_ERRORS] = { "local_link_integrity_errors", DIR_IB },
        [PORT_COUNTER_SYMBOL_ERROR] = { "symbol_error", DIR_IB },
        [PORT_COUNTER_LINK_ERROR_RECOVERY] = { "link_error_recovery", DIR_IB },
        [PORT_COUNTER_PORT_RCV_ERRORS] = { "port_rcv_errors", DIR_IB },
        [PORT_COUNTER_PORT_XMIT_DISCARDS] = { "port_xmit_discards", DIR_IB },
        [PORT_COUNTER_RNR_NAK_RETRY_ERR] = { "rnr_nak_retry_err", DIR_HW },
        [PORT_COUNTER_ROCE_SLOW_RESTART] = { "roce_slow_restart", DIR_HW },
        [PORT_COUNTER_OUT_OF_SEQUENCE] = { "out_of_sequence", DIR_HW },
        [PORT_COUNTER_PACKET_SEQ_ERR] = { "packet_seq_err", DIR_HW },
        [PORT_COUNTER_LOCAL_ACK_TIMEOUT_ERR] = { "local_ack_timeout_err", DIR_HW },
        [PORT_COUNTER_RX_CRC_ERRORS] = { "rx_crc_errors", DIR_NETDEV },
        [PORT_COUNTER_RX_BYTES] = { "rx_bytes", DIR_NETDEV },
        [PORT_COUNTER_TX_BYTES] = { "tx_bytes", DIR_NETDEV },
        [PORT_COUNTER_LINK_DOWN_EVENTS_PHY] = { "link_down_events_phy", DIR_DRIVER },
        [PORT_COUNTER_RX_DISCARDS_PHY] = { "rx_discards_phy", DIR_DRIVER },
        [PORT_COUNTER_TX_DISCARDS_PHY] = { "tx_discards_phy", DIR_DRIVER },
        [PORT_COUNTER_RX_OUT_OF_BUFFER] = { "rx_out_of_buffer", DIR_DRIVER },
        [PORT_COUNTER_RX_PAUSE_CTRL_PHY] = { "rx_pause_ctrl_phy", DIR_DRIVER },
        [PORT_COUNTER_TX_PAUSE_CTRL_PHY] = { "tx_pause_ctrl_phy", DIR_DRIVER },
};

const char *port_counter_name(enum port_counter counter)
{
        return counter < _PORT_COUNTER_MAX ? counters[counter].name : NULL;
}

int port_counter_from_name(const char *name, enum port_counter *out)
{
        for (size_t i = 0; i < _PORT_COUNTER_MAX; i++)
                if (strcmp(counters[i].name, name) == 0) {
                        *out = (enum port_counter)i;
                        return 0;
                }
        return -ENOENT;
}

const char *port_counter_dir(enum port_counter counter)
{
        static const char *const dirs[] = { [DIR_IB] = "counters",
                                            [DIR_HW] = "hw_counters",
                                            [DIR_NETDEV] = "statistics",
                                            [DIR_DRIVER] = "driver" };

        return counter < _PORT_COUNTER_MAX ? dirs[counters[counter].dir] : NULL;
}

bool port_counter_is_traffic(enum port_counter counter)
{
        return counter == PORT_COUNTER_RX_BYTES || counter == PORT_COUNTER_TX_BYTES;
}

void port_counters_take_driver_stats(struct port_counter_sample *s, const struct driver_stats *stats)
{
        for (size_t i = 0; i < _PORT_COUNTER_MAX; i++) {
                const struct driver_stat *d;

                if (counters[i].dir != DIR_DRIVER)
                        continue;
                d = driver_stats_find(stats, counters[i].name);
                s->has[i] = d != NULL;
                s->values[i] = d ? d->value : 0;
        }
}

/* A netdev without driver statistics here (another namespace's, a fixture's, a driver that keeps
 * none) has none of the table's. */
static void read_driver_stats(struct port_counter_sample *s)
{
        struct driver_stats stats;

        if (!s->netdev[0] || driver_stats_read(s->netdev, &stats) < 0)
                return;
        port_counters_take_driver_stats(s, &stats);
        driver_stats_free(&stats);
}

static void read_port(const char *root, struct port_counter_sample *s)
{
        for (size_t i = 0; i < _PORT_COUNTER_MAX; i++) {
                int r;

                if (counters[i].dir == DIR_DRIVER)
                        continue;
                if (counters[i].dir == DIR_NETDEV || !s->device[0]) {
                        if (!s->netdev[0] || counters[i].dir != DIR_NETDEV)
                                continue;
                        r = sysfs_read_u64(root, &s->values[i], "class/net/%s/statistics/%s", s->netdev,
                                           counters[i].name);
                } else {
                        r = sysfs_read_u64(root, &s->values[i], "class/infiniband/%s/ports/%u/%s/%s",
                                           s->device, s->port, port_counter_dir(i), counters[i].name);
                }
                s->has[i] = r == 0;
                if (r < 0)
                        s->values[i] = 0;
        }
        read_driver_stats(s);
}

static int add_port(const char *root, struct port_counter_list *out, const char *device, unsigned port,
                    const char *netdev)
{
        struct port_counter_sample *v = realloc(out->v, (out->n + 1) * sizeof(*v));
        struct port_counter_sample *s;

        if (!v)
                return -ENOMEM;
        out->v = v;
        s = &v[out->n++];
        *s = (struct port_counter_sample){ .port = port };
        for (size_t i = 0; i < _PORT_COUNTER_MAX; i++)
                s->window_delta[i] = -1;
        snprintf(s->device, sizeof(s->device), "%s", device);
        if (netdev)
                snprintf(s->netdev, sizeof(s->netdev), "%s", netdev);
        else if (rdma_port_netdev(root, device, port, s->netdev) == -ENOMEM)
                return -ENOMEM;
        read_port(root, s);
        return 0;
}

static int scan_device(const char *root, struct port_counter_list *out, const char *device)
{
        _cleanup_strv_ char **ports = NULL;
        int r;

        if (strlen(device) >= sizeof(out->v->device))
                return 0;
        r = sysfs_list(root, &ports, "class/infiniband/%s/ports", device);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        for (char **p = ports; *p; p++) {
                uint64_t num;

                if (parse_uint64(*p, 10, 1, 255, &num) < 0)
                        continue;
                r = add_port(root, out, device, (unsigned)num, NULL);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int scan_rdma(const char *sysfs_root, struct port_counter_list *out)
{
        _cleanup_strv_ char **devices = NULL;
        int r;

        r = sysfs_list(sysfs_root, &devices, "class/infiniband");
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        for (char **d = devices; *d; d++) {
                r = scan_device(sysfs_root, out, *d);
                if (r < 0)
                        return r;
        }
        return 0;
}

int port_counters_scan(const char *sysfs_root, char *const *netdevs, struct port_counter_list *out)
{
        int r;

        *out = (struct port_counter_list){ 0 };
        r = scan_rdma(sysfs_root, out);
        for (char *const *n = netdevs; r >= 0 && n && *n; n++)
                if (strlen(*n) < IF_NAMESIZE && !port_counter_list_find_netdev(out, *n))
                        r = add_port(sysfs_root, out, "", 0, *n);
        if (r < 0)
                port_counter_list_free(out);
        return r < 0 ? r : 0;
}

void port_counter_list_free(struct port_counter_list *list)
{
        free(list->v);
        *list = (struct port_counter_list){ 0 };
}

const struct port_counter_sample *port_counter_list_find(const struct port_counter_list *list,
                                                         const char *device, unsigned port)
{
        for (size_t i = 0; i < list->n; i++)
                if (list->v[i].port == port && strcmp(list->v[i].device, device) == 0)
                        return &list->v[i];
        return NULL;
}

const struct port_counter_sample *port_counter_list_find_netdev(const struct port_counter_list *list,
                                                                const char *ifname)
{
        for (size_t i = 0; ifname[0] && i < list->n; i++)
                if (strcmp(list->v[i].netdev, ifname) == 0)
                        return &list->v[i];
        return NULL;
}

bool port_counter_same_port(const struct port_counter_sample *a, const struct port_counter_sample *b)
{
        if (a->device[0] || b->device[0])
                return a->port == b->port && strcmp(a->device, b->device) == 0;
        return strcmp(a->netdev, b->netdev) == 0;
}
