/*
 * The pure part of sparkd-probe-rdma, unit-tested without an RDMA device: its command line, the
 * choice of RDMA devices (the rails: a port's twins) and GIDs from the fabric inventory, the
 * bandwidth and latency arithmetic, and the result JSON.
 */
#pragma once

#include <json-c/json.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "inventory/rdma.h"
#include "probe_cmdline.h"

#define RDMA_PROBE_PROG      "sparkd-probe-rdma"
#define RDMA_RAILS_MAX       2 /* one port: its two PCIe twins */
#define RDMA_QPS_MAX         16
#define RDMA_SIZE_MAX        (8ULL << 20) /* perftest's largest message */
#define RDMA_TX_DEPTH_MAX    1024
#define RDMA_LAT_ITERS_MAX   1000000
#define RDMA_TOKEN_LEN       32 /* the daemon's one-time token: 32 hex digits */
#define RDMA_FALLBACK_REASON "the fabric would fall back to TCP"

struct rdma_options {
        /* remote: the client's server's fabric address; bind: the local fabric address, it picks the
         * RDMA devices */
        struct probe_args args;
        bool is_one_way;     /* bandwidth client -> server only */
        bool want_bandwidth; /* --bandwidth, or neither --bandwidth nor --latency */
        bool want_latency;   /* --latency, or neither */
        bool is_one_rail;    /* --one-rail */
        unsigned qps;        /* per RDMA device (default 4) */
        uint64_t size;       /* bandwidth message size (default 64 KiB) */
        unsigned tx_depth;   /* outstanding writes per QP (default 128) */
        unsigned cq_mod;     /* one signalled write in this many (default 100) */
        double duration;     /* seconds per direction when iters is 0 (default 5) */
        uint64_t iters;      /* writes per QP instead of a duration; 0: the duration decides */
        unsigned lat_iters;
        unsigned lat_size;
        unsigned max_rails; /* 1: the device holding the address only; 2: its twin too */
        const char *twins;  /* --twins DEV,DEV: a port's devices, instead of the pairing by PCI; NULL */
        int gid_index;      /* --gid-index: the bind address's GID index; -1 (auto): found by address */
};

#define RDMA_GID_INDEX_MAX 65535

/* The command line, read into a struct rdma_options that starts as rdma_options_defaults. */
extern const struct probe_cmdline rdma_cmdline;
extern const struct rdma_options rdma_options_defaults;
/* Parses argv from the defaults. 0 when it can run (or args.want_help/want_version is set);
 * -EINVAL with a sentence naming the option in err otherwise. */
int rdma_options_parse(int argc, char **argv, struct rdma_options *o, char *err, size_t err_size);

/* One RDMA device of the port and how it is addressed. */
struct rdma_rail {
        char device[64];
        unsigned port;
        char netdev[IF_NAMESIZE];
        int gid_index; /* the RoCE v2 GID the connections must use */
        char gid[40];
        char address[64]; /* IPv4 (the netdev's address), or IPv6 link-local for a twin without one */
        bool is_ipv6;
        unsigned active_mtu; /* bytes, 0 unknown */
        int64_t speed_mbps;  /* the netdev's Ethernet speed, -1 unknown */
        unsigned rate_gbps;  /* the RDMA port's rate, 0 unknown */
};

/* Makes the two devices of list ("DEV,DEV") each other's twin, whatever the inventory paired them
 * with. -EINVAL (not two different names) or -ENODEV (a name this node lacks), with why in err. */
int rdma_twins_apply(struct rdma_inventory *inv, const char *list, char *err, size_t err_size);

/*
 * The rails for local address ipv4 in inv: first the device whose RoCE v2 GID is ipv4's
 * IPv4-mapped address (at gid_index when it is not -1: -EINVAL with what that GID is instead
 * when it is not a RoCE v2 GID of ipv4), then (max_rails 2) its twin, by the RoCE v2 GID of its netdev's own
 * IPv4 address (not a VLAN's on top of it) or else its RoCE v2 link-local GID. A twin that is not ACTIVE or
 * has no RoCE v2 GID is left out with a sentence in note. -ENODEV with why in err ("no RDMA device: ...; the
 * fabric would fall back to TCP").
 */
int rdma_rails_choose(const struct rdma_inventory *inv, const char *ipv4, int gid_index, unsigned max_rails,
                      struct rdma_rail *rails, size_t *n_rails, char *note, size_t note_size, char *err,
                      size_t err_size);

/* The wire size of one connection's private data: the token, the sender's buffer and plan. */
struct rdma_conn_data {
        char token[RDMA_TOKEN_LEN]; /* zeros when run by hand without one */
        uint8_t version;
        uint8_t rail;
        uint8_t qp;
        uint8_t flags;
        uint32_t rkey; /* big-endian on the wire */
        uint64_t addr; /* big-endian */
        uint32_t size; /* big-endian: the buffer the peer may write (each half of it) */
        uint8_t pad[4];
};
_Static_assert(sizeof(struct rdma_conn_data) <= 56, "an RC connect carries at most 56 bytes");

/* A server's answer to the first connection: its buffer and where its twin listens. */
struct rdma_accept_data {
        uint32_t rkey;
        uint64_t addr;
        uint32_t size;
        uint8_t n_rails;
        uint8_t family[RDMA_RAILS_MAX]; /* 4 or 6 */
        uint8_t pad;
        uint16_t port[RDMA_RAILS_MAX];
        uint8_t address[RDMA_RAILS_MAX][16];
} __attribute__((packed));
_Static_assert(sizeof(struct rdma_accept_data) <= 196, "an RC accept carries at most 196 bytes");

#define RDMA_CONN_VERSION 1

void rdma_conn_data_pack(struct rdma_conn_data *d, const char *token, unsigned rail, unsigned qp,
                         uint64_t addr, uint32_t rkey, uint32_t size);
/* Checks a connection's private data (len bytes) against the expected token (NULL: any). 0, or
 * -EACCES (wrong token), -EPROTO (malformed), with why. Fills the host-order fields. */
int rdma_conn_data_check(const void *data, size_t len, const char *token, struct rdma_conn_data *out,
                         char *why, size_t why_size);

/* ---- arithmetic ---- */

/* Gb/s as perftest --report_gbits reports: bits / 1e9 / seconds; 0 without time. */
double rdma_gbps(uint64_t bytes, double seconds);
/* The payload rate a RoCE v2 link of speed_mbps carries with RDMA WRITEs in packets of
 * active_mtu bytes: line rate less Ethernet, IP, UDP, BTH and ICRC per packet (and preamble and
 * gap), 0 when either is unknown. This is the default expectation of the rdma probe per port. */
double rdma_payload_gbps(int64_t speed_mbps, unsigned active_mtu);

struct rdma_latency {
        size_t count; /* samples after the tail is cut */
        double min_us, max_us, typical_us, avg_us, stdev_us, p99_us, p999_us;
};
/* One-way latencies (half of each round trip, as perftest's write_lat) from round-trip times in
 * microseconds: sorted in place, the 2 highest dropped as perftest does (when more than 2),
 * typical is the median. -EINVAL without samples. */
int rdma_latency_compute(double *rtt_us, size_t n, struct rdma_latency *out);

/* ---- result JSON ---- */

/* What one rail moved in one direction. */
struct rdma_rail_figures {
        const struct rdma_rail *rail;
        unsigned qps;
        uint64_t bytes;
        uint64_t writes;
        double seconds; /* first post to last completion */
};

/* {direction, from, to, gbps, bytes, duration_s, msg_rate_mpps, rails: [{name, netdev, gbps, bytes,
 * qps, gid_index}]}: the port's total over the longest rail time, as the tcp probe's directions. */
json_object *rdma_direction_json(const char *direction, const char *from, const char *to,
                                 const struct rdma_rail_figures *rails, size_t n_rails);
/* {iterations, size, min_us, max_us, typical_us, avg_us, stdev_us, p99_us, p99_9_us}. */
json_object *rdma_latency_json(const struct rdma_latency *lat, unsigned size, unsigned iterations);
/* [{name, port, netdev, gid_index, gid, address, active_mtu, speed_gbps}] */
json_object *rdma_rails_json(const struct rdma_rail *rails, size_t n);
/* The expected port figure: rdma_payload_gbps of the first rail's netdev (the twins share one
 * port of that speed), 0 unknown. */
double rdma_port_expected_gbps(const struct rdma_rail *rails, size_t n);
