/*
 * This node's neighbour table, the "neighbours" section other nodes read to draw the cluster's
 * map: every fabric netdev (with or without an address) with its link-layer facts (MAC, twin,
 * port number as "rail" (inventory/port_number.h: from the PCI function and the twins, never
 * from name order), PCI address, speed, MTU, state, addresses) and what is at the other end of
 * its cable. The far end comes from lldpd when it runs (a node or a switch, with its port and
 * advertised speed); where lldpd is absent or hears nothing on the port, from the peer channel
 * (the peer with a port on this port's subnet, "lldp_silent" when lldpd runs; several peers
 * there: a switch that says nothing, named after the subnet, "silent switch 10.10.0.0/24", so every
 * node on it names one switch). LLDP silence is not a missing cable. A far end is matched to a sparkd node
 * by the LLDP chassis the peers sent (id, then name) or by the peer's name. Pure: the links, the LLDP table
 * and the peers are its inputs.
 */
#pragma once

#include <json-c/json.h>

#include "daemon/host/lldp_table.h"

/* links: the links method's list; peers: the peers method's result (NULL: none known).
 * {"lldpd", "chassis", "ports": [...]} as the cluster's "neighbours" section holds it. */
json_object *neighbours_build(json_object *links, const struct lldp_table *lldp, json_object *peers);

/* ports[i]: the physical port of list[i] (inventory/port_number.h), from each item's name (under
 * name_key: "name" in links, "netdev" in a neighbours section), "pci", "twin" and "dev_port". */
void neighbours_number_ports(json_object *list, const char *name_key, int *ports);
