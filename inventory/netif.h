/*
 * The fabric interface inventory: which netdevs sparkd looks after, read from sysfs under one
 * root. A fabric netdev is one backed by an RDMA device (class/net/IF/device/infiniband/DEV, or a
 * port's GID 0 netdev or a soft device's parent: rxe, siw) or one named by the config ([fabric]
 * interfaces, names or shell globs). Twins are the two netdevs
 * that are halves of one physical port: on a DGX Spark each QSFP port is two PCIe x4 functions
 * with the same bus:device.function in two PCI domains (0000:01:00.1 and 0002:01:00.1).
 */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct netif {
        char name[IF_NAMESIZE];
        int ifindex;
        char pci[64];        /* PCI address of class/net/IF/device, "" when not PCI */
        int dev_port;        /* class/net/IF/dev_port: the port of a multi-port function, 0 default */
        char **rdma_devices; /* RDMA devices running over the netdev (NULL-terminated, may be empty) */
        char twin[IF_NAMESIZE];
        bool is_configured; /* matched a [fabric] interfaces pattern */
        bool is_admin_up;
        bool has_carrier;
        char operstate[16];
        char mac[24];       /* "aa:bb:cc:dd:ee:ff" (class/net/IF/address), "" when unreadable */
        unsigned mtu;       /* 0 when the kernel's mtu file could not be read */
        int64_t speed_mbps; /* -1 when the kernel does not say (link down, virtual device) */
};

struct netif_list {
        struct netif *v;
        size_t n;
        char **warnings; /* netdevs that could not be read and were left out, one line each */
};

/* Scans ROOT/class/net. patterns may be NULL. Interfaces that vanish during the scan are
 * skipped; one whose ifindex reads as something other than a number is skipped with a line in
 * warnings; unreadable optional attributes are left at their "unknown" values. */
int netif_scan(const char *sysfs_root, char *const *patterns, struct netif_list *out);
void netif_list_free(struct netif_list *list);
const struct netif *netif_list_find(const struct netif_list *list, const char *name);

/* Are a and b PCI addresses of the same function in two domains ("0000:01:00.1", "0002:01:00.1")? */
bool netif_pci_are_twins(const char *a, const char *b);
/* Does name match one of the patterns (fnmatch globs)? */
bool netif_name_matches(char *const *patterns, const char *name);
