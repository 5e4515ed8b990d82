/*
 * The RDMA inventory: devices, ports, port state, link layer, speed, GID table (type and netdev
 * of every entry) and the RoCE v2 IPv4 GID of each port, read from sysfs under the host root
 * (class/infiniband), enriched by libibverbs (active MTU) when it reads the real /sys. What
 * `ibdev2netdev` and `show_gids` print, as data; the GID table's part is in rdma_gid.h. Malformed
 * or missing sysfs content becomes a warning in the inventory, never a failure of the scan.
 */
#pragma once

#include <json-c/json.h>
#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcie.h"
#include "rdma_gid.h"

/* Port states (rdma_port.state) and physical states (rdma_port.phys_state) as the kernel numbers
 * them; 0 is "unknown" in both. */
enum {
        RDMA_PORT_DOWN = 1,
        RDMA_PORT_INIT = 2,
        RDMA_PORT_ARMED = 3,
        RDMA_PORT_ACTIVE = 4,
};
enum {
        RDMA_PHYS_SLEEP = 1,
        RDMA_PHYS_POLLING = 2,
        RDMA_PHYS_DISABLED = 3,
        RDMA_PHYS_TRAINING = 4,
        RDMA_PHYS_LINK_UP = 5,
        RDMA_PHYS_ERROR_RECOVERY = 6,
        RDMA_PHYS_PHY_TEST = 7,
};

struct rdma_port {
        unsigned num;
        unsigned state;            /* 4 = ACTIVE, from "4: ACTIVE"; 0 unknown */
        char state_name[32];       /* "ACTIVE" */
        unsigned phys_state;       /* 5 = LinkUp */
        char phys_state_name[32];  /* "LinkUp"; the longest is "PortConfigurationTraining" */
        char link_layer[16];       /* "Ethernet", "InfiniBand", or "" (unreadable, unknown) */
        char rate[48];             /* "200 Gb/sec (4X HDR)", "" unreadable or malformed */
        unsigned rate_gbps;        /* parsed from rate, 0 unknown */
        unsigned active_mtu;       /* bytes, from verbs; 0 unknown (fixture trees, no verbs) */
        char netdev[IF_NAMESIZE];  /* the port's netdev (ibdev2netdev), "" when none */
        int64_t netdev_speed_mbps; /* its negotiated Ethernet speed (class/net/IF/speed), -1 unknown */
        struct rdma_gid *gids;     /* valid (non-zero) entries only, by index */
        size_t n_gids;
        int roce_v2_ipv4_gid; /* the first RoCE v2 IPv4-mapped GID, -1 none: shown, never used to choose
                               * (a VLAN's address may come first; see rdma_port_gid_for_ipv4) */
};

struct rdma_device {
        char name[64];
        char pci[64];          /* PCI address of class/infiniband/DEV/device, "" when not PCI */
        char twin[64];         /* the other RDMA device of the same physical port, "" none */
        struct pcie_link pcie; /* of its PCI function; unknown when not PCI */
        struct rdma_port *ports;
        size_t n_ports;
};

struct rdma_inventory {
        struct rdma_device *v;
        size_t n;
        char **warnings;       /* NULL-terminated, never NULL after a scan: "mlx5_0 port 1: gid 3: ..." */
        bool verbs_used;       /* libibverbs was asked (real /sys and rdma-core built in) */
        char verbs_error[128]; /* why verbs could not be used, "" when it could or was not asked */
};

/* Scans SYSFS_ROOT/class/infiniband. use_verbs asks libibverbs too (only meaningful when
 * sysfs_root is the running system's). No devices is an empty inventory, not an error; what
 * sysfs or verbs get wrong is in warnings and verbs_error. Fails only with -ENOMEM. */
int rdma_scan(const char *sysfs_root, bool use_verbs, struct rdma_inventory *out);
void rdma_inventory_free(struct rdma_inventory *inv);
json_object *rdma_inventory_to_json(const struct rdma_inventory *inv);

const struct rdma_device *rdma_find_device(const struct rdma_inventory *inv, const char *name);
/* The device and port whose netdev is ifname; NULL when none. */
const struct rdma_port *rdma_find_port_by_netdev(const struct rdma_inventory *inv, const char *ifname,
                                                 const struct rdma_device **device);
/* The port's netdev as ibdev2netdev finds it: the netdev of GID 0, else the PCI function's own
 * netdev (the only one, or the one whose dev_port is this port on a multi-port function).
 * -ENOENT when it has none. */
int rdma_port_netdev(const char *sysfs_root, const char *dev, unsigned port, char ifname[IF_NAMESIZE]);
/* Pure parsers, exposed for tests. */
int rdma_parse_state(const char *s, unsigned *num, char *name, size_t size); /* "4: ACTIVE" */
int rdma_parse_rate_gbps(const char *s, unsigned *gbps);                     /* "200 Gb/sec (4X HDR)" */
