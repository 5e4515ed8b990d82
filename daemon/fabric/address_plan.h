/*
 * The address plan of a derived map: the addresses each fabric netdev should carry so that a
 * ring, a mesh or a switch needs no hand-made plan. The scheme, and why:
 * - Link-local IPv4 (169.254.0.0/16), as NVIDIA's two-Spark playbook uses for a pair: never
 *   routed, so it cannot collide with a site's networks, and no DHCP. Unlike that playbook the
 *   addresses are static, one /24 per link: autoconfigured link-local puts every port in the same
 *   169.254/16, which on a ring or mesh leaves the kernel (and NCCL's subnet-aware routing) no
 *   way to tell which port reaches which node.
 * - One subnet per twin pair of each cable (the two PCI functions of a Spark port each get their
 *   own), since twins on one subnet make routing ambiguous.
 * - The subnet's third octet is a hash of the link's ends (node ids and rails, which every node
 *   sorts the same way), 1 to 254 (RFC 3927 keeps 169.254.0.x and 169.254.255.x back);
 *   a collision takes the next free octet, links in the map's order. A link's subnet thus stays
 *   put when other links come and go, most of the time; sparkd never moves the addresses of a
 *   link that carries traffic (topology_netplan_write).
 * - .1 is the end whose node id sorts first, .2 the other. A switch star is one subnet per twin
 *   index, hashed from the switch's chassis id; each node's host number is its place in the
 *   sorted node ids plus one.
 */
#pragma once

#include "topology_model.h"

/* Fills every link's addresses; -E2BIG when the links need more than the 254 subnets. */
int address_plan_assign(struct topology_graph *g);
