/*
 * What the daemon keeps about one link: the kernel's last report of it, what the inventory and
 * the config say it should be, its flap detector and its counters. Shared by the link set
 * (links.c), enforcement (link_enforce.c), oper-state reports (link_oper.c) and the counters'
 * persistence (link_counters.c).
 */
#pragma once

#include <event2/event.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "flap.h"
#include "netlink.h"

struct links;

struct link {
        struct links *owner;
        int ifindex;
        char name[IF_NAMESIZE];
        bool is_fabric;
        bool want_down;
        char twin[IF_NAMESIZE];
        char pci[64];
        int dev_port; /* the inventory's (inventory/netif.h) */
        char mac[24]; /* "aa:bb:cc:dd:ee:ff" from the inventory, "" unknown */
        char **rdma_devices;
        int64_t speed_mbps;

        struct netlink_link seen; /* the last state reported by the kernel */
        bool is_oper_up;
        time_t last_change; /* wall clock of the last oper-state change, 0: none seen */

        uint64_t flaps;       /* carrier losses, persisted */
        uint64_t corrections; /* MTU and admin-state corrections, persisted */
        uint64_t flaps_since_start;
        struct flap_detector flap;
        struct event *stable_timer;

        unsigned mtu_drift_logged; /* the drifted MTU already reported in audit mode */
        bool admin_drift_logged;
        int mtu_error;   /* last failed MTU correction, 0 when none */
        int admin_error; /* last failed admin-state correction */
};
