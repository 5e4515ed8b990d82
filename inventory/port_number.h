/*
 * Which physical port each fabric netdev is, numbered from what the hardware says, never from
 * the order of the names. A PCI card's ports are its functions (mlx5: one port per function,
 * the ".N" of the PCI address) or, where one function drives several ports, its dev_port
 * numbers: the port within the card is function + dev_port. Cards are taken in PCI order (domain,
 * bus, device), each after the ports of the cards before it. Twins (the two halves of one port:
 * the twin relation, or one function in two PCI domains as on a DGX Spark, 0000:01:00.1 and
 * 0002:01:00.1) are one port, placed where their first half (in PCI order) is. Netdevs without a
 * PCI address (veths, soft-RoCE) come after every card, one port per twin pair, in name order.
 * On a DGX Spark: enp1s0f0np0 and enP2p1s0f0np0 are port 0, enp1s0f1np1 and enP2p1s0f1np1 port 1.
 * Where that would number a port PORT_NUMBER_LIMIT or more (many functions: virtual functions,
 * several cards), the ports are numbered in the same order without gaps instead.
 */
#pragma once

#include <stddef.h>

#define PORT_NUMBER_LIMIT 32 /* as many ports as the topology takes of a node */

struct port_number_netdev {
        const char *name; /* the netdev */
        const char *pci;  /* "DDDD:BB:DD.F", NULL or "" when not PCI */
        const char *twin; /* the other half's name, NULL or "" when none */
        int dev_port;     /* class/net/IF/dev_port, 0 when absent */
};

/* ports[i] is the port of v[i]; the same for any order of v. Names must be unique. */
void port_number_assign(const struct port_number_netdev *v, size_t n, int *ports);
