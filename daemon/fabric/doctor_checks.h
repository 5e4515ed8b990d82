/*
 * The doctor's checks, each adding one check (or, for the rails, a few) to the result from the
 * fabric facts; doctor.c runs them in the report's order.
 */
#pragma once

#include "doctor_result.h"
#include "inventory/fabric.h"

/* doctor_ports.c: the RDMA devices, their ports, and the netdevs and addresses on them. */
void doctor_check_rdma_devices(struct check *c, const struct fabric_facts *f);
/* [fabric] rdma = no: in place of the RDMA checks, a fabric netdev up with an IPv4 address for the
 * socket transport. */
void doctor_check_socket_fabric(struct check *c, const struct fabric_facts *f);
void doctor_check_ports(struct check *c, const struct fabric_facts *f);
void doctor_check_mtu(struct check *c, const struct fabric_facts *f);
void doctor_check_twin_subnets(struct check *c, const struct fabric_facts *f);
void doctor_check_twins_up(struct check *c, const struct fabric_facts *f);
void doctor_check_port_addresses(struct check *c, const struct fabric_facts *f);
void doctor_check_roce_gid(struct check *c, const struct fabric_facts *f);

/* doctor_host.c: what the host runs on top: sysctls, memlock, GPU, GPU Direct RDMA, NCCL. */
void doctor_check_sysctls(struct check *c, const struct fabric_facts *f);
void doctor_check_memlock(struct check *c, const struct fabric_facts *f);
void doctor_check_gpu(struct check *c, const struct fabric_facts *f);
void doctor_check_gdr_risk(struct check *c, const struct fabric_facts *f);
void doctor_check_nccl(struct check *c, const struct fabric_facts *f);

/* doctor_profiles.c: the MTU NetworkManager or netplan will apply to each fabric netdev. */
void doctor_check_profiles(struct check *c, const struct fabric_facts *f);
/* doctor_rails.c: the PCIe link, Ethernet speed and AER counters of every RDMA device. */
void doctor_check_rails(struct check *c, const struct fabric_facts *f);
/* doctor_counters.c: the error counters of every RDMA port and the watch's alarms. */
void doctor_check_port_counters(struct check *c, const struct fabric_facts *f);
/* doctor_consistency.c: the up nodes' software, compared; only when the facts have it. */
void doctor_check_consistency(struct check *c, const struct fabric_facts *f);
/* doctor_firewall.c: the firewall checks with the peers; only when the facts have them. */
void doctor_check_firewall(struct check *c, const struct fabric_facts *f);
/* doctor_lldpd.c: lldpd, which names the far end of every cable; only when the facts say. */
void doctor_check_lldpd(struct check *c, const struct fabric_facts *f);
/* doctor_peers.c: the peers' state, cluster key and MTU; only when the facts have peers. */
void doctor_check_peers(struct check *c, const struct fabric_facts *f);
/* doctor_names.c: names more than one node id carries; only when there are such. */
void doctor_check_names(struct check *c, const struct fabric_facts *f);
/* doctor_topology.c: the cabling's findings from the topology map; only when the facts have one. */
void doctor_check_topology(struct check *c, const struct fabric_facts *f);
