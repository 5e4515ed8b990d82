/*
 * Whether this node has a route to an IPv4 address, and the source address and netdev it would
 * leave from: the kernel's own lookup, through a UDP socket connected to the address, which sends
 * nothing and does not block (no ARP, no handshake). A route is not an answer from the far end:
 * it says the address is not unreachable from here, as the job's first connect would find.
 */
#pragma once

#include <net/if.h>

struct route_lookup {
        char source[16];          /* the address this node would send from */
        char ifname[IF_NAMESIZE]; /* its netdev, "" when none has it */
};

/* 0 with out filled; -EINVAL for text that is not a dotted IPv4 address; the kernel's negative
 * errno (-ENETUNREACH, -EHOSTUNREACH...) when there is no route. */
int route_lookup(const char *ipv4, struct route_lookup *out);
