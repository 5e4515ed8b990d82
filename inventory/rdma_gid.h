/*
 * The GID table of an RDMA port: its entries (GID, type, netdev, IPv4-mapped address), their
 * parser, and the RoCE v2 entry of an IPv4 address (what NCCL_IB_GID_INDEX must name).
 */
#pragma once

#include <json-c/json.h>
#include <net/if.h>
#include <stddef.h>

enum rdma_gid_type {
        RDMA_GID_UNKNOWN,
        RDMA_GID_IB,      /* "IB/RoCE v1" on an InfiniBand port */
        RDMA_GID_ROCE_V1, /* "IB/RoCE v1" on an Ethernet port */
        RDMA_GID_ROCE_V2, /* "RoCE v2" */
};

struct rdma_gid {
        unsigned index;
        char gid[40]; /* as sysfs prints it: 8 groups of 4 hex digits */
        enum rdma_gid_type type;
        char netdev[IF_NAMESIZE]; /* "" when none */
        char ipv4[16];            /* dotted quad when the GID is IPv4-mapped (::ffff:a.b.c.d), else "" */
};

struct rdma_port;
struct rdma_scan;

const char *rdma_gid_type_to_string(enum rdma_gid_type type);
/* "fe80:0000:...:7711" (8 groups of 4 hex digits) into gid, lowercased, and its dotted quad into
 * ipv4 when it is IPv4-mapped ("" otherwise; ipv4 may be NULL); -EBADMSG for anything else. The
 * all-zero GID parses: an empty table entry is for the caller to skip. */
int rdma_parse_gid(const char *s, char *gid, size_t size, char *ipv4, size_t ipv4_size);
/* The RoCE v2 GID entry of port whose IPv4-mapped address is ipv4; -1 when none. */
int rdma_port_gid_for_ipv4(const struct rdma_port *port, const char *ipv4);

/* Reads the GID table of the port being scanned into p->gids (valid entries only, by index). */
void rdma_gid_read_table(struct rdma_scan *s, struct rdma_port *p);
json_object *rdma_gid_to_json(const struct rdma_gid *g);
