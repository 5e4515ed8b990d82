/*
 * This node's management address: the source address of its IPv4 default route, the address the
 * other nodes reach it on over the management network (the 10GbE LAN of a DGX Spark) where the
 * fabric does not link every pair. The route is read from /proc/net/route (this network
 * namespace's), the source from the kernel's own choice for the gateway (a UDP socket connected
 * to it, which sends nothing) or, for a default route without a gateway, the netdev's first IPv4
 * address. Nothing here blocks: both are local kernel queries.
 */
#pragma once

#include <net/if.h>
#include <stdint.h>
#include <stdio.h>

struct mgmt_address {
        char ifname[IF_NAMESIZE];
        char address[24]; /* "A.B.C.D/P" */
};

/* The default route with the lowest metric in the text of /proc/net/route: its netdev and its
 * gateway (network byte order, 0 for none). -ENOENT when there is none. */
int mgmt_route_parse(FILE *route, char ifname[IF_NAMESIZE], uint32_t *gateway);

/* The management address from route_path (normally /proc/net/route). -ENOENT when there is no
 * default route or its netdev has no IPv4 address; another negative errno when a read failed. */
int mgmt_address_read(const char *route_path, struct mgmt_address *out);
