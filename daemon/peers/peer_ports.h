/*
 * Fabric ports as the peer protocol speaks of them, {ifname, addresses, mtu}: this node's, read
 * from the links and written into hello and heartbeat, and the lookups by address that pick the
 * port a connection goes through, on this node's list and on the list a peer sent.
 */
#pragma once

#include <json-c/json.h>
#include <netinet/in.h>
#include <stdbool.h>

#include "daemon/host/links.h"

/* links may be NULL (a table without fabric links, such as a tool driving peer messages): then
 * there are no ports. */
int peer_ports_local(struct links *links, struct link_ports *ret);
/* The wire form: [{ifname, addresses, mtu}]. */
json_object *peer_ports_to_json(const struct link_ports *ports);

/* "ADDR" or "ADDR/PREFIX" (prefix 32 when absent). */
bool peer_ipv4_parse(const char *s, struct in_addr *addr, unsigned *prefix);
/* The local port whose addresses include ip (or share its subnet, when by_subnet); *address is
 * the matching one, valid as long as ports. */
const struct link_port *peer_port_for_address(const struct link_ports *ports, const char *ip, bool by_subnet,
                                              const char **address);
/* The same on a list a peer sent (anything but an array of objects names no port), by address. */
json_object *peer_port_in_json(json_object *ports, const char *ip);
const char *peer_port_json_ifname(json_object *port);
unsigned peer_port_json_mtu(json_object *port);
