/*
 * What lldpd knows, as one table: whether it runs, this node's chassis as lldpd advertises it,
 * and every neighbour it has heard on each interface (chassis, port, the speed the far end
 * advertises from its MAU type, whether it is a bridge). Plain data, so the watch (lldp_watch.c)
 * fills it and the neighbour table (daemon/fabric/neighbours.c) reads it without liblldpctl.
 */
#pragma once

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/text_check.h"

/* lldpd keeps up to 255 bytes of whatever a frame said; the table keeps them cleaned and cut to
 * what every node's neighbour table takes (text_check.h). */
#define LLDP_ID_MAX   TEXT_LLDP_SIZE
#define LLDP_NAME_MAX TEXT_LLDP_SIZE
/* More neighbours than this on one host is not a fabric but a flood; the rest are left out. */
#define LLDP_MAX_NEIGHBOURS 256

enum lldp_status {
        LLDP_ABSENT,        /* no lldpd listening on the socket */
        LLDP_RUNNING,       /* connected and read */
        LLDP_ERROR,         /* lldpd there but unusable: error says why */
        LLDP_NOT_INSTALLED, /* liblldpctl (lldpd's package) cannot be loaded: error says why */
};

struct lldp_neighbour {
        char ifname[IF_NAMESIZE]; /* the local interface it was heard on */
        char chassis_id[LLDP_ID_MAX];
        char chassis_id_subtype[24]; /* "mac", "local", "ifname", ... as lldpd names them */
        char sysname[LLDP_NAME_MAX];
        char port_id[LLDP_ID_MAX];
        char port_id_subtype[24];
        char port_descr[LLDP_NAME_MAX];
        int64_t speed_mbps; /* from the advertised MAU type; -1 when not advertised or unknown */
        bool is_bridge;     /* the bridge capability is enabled */
};

struct lldp_table {
        enum lldp_status status;
        char error[200]; /* LLDP_ERROR: what went wrong; LLDP_ABSENT, LLDP_NOT_INSTALLED: why */
        bool has_chassis;
        char chassis_id[LLDP_ID_MAX]; /* this node's, as lldpd advertises it */
        char chassis_name[LLDP_NAME_MAX];
        struct lldp_neighbour *v;
        size_t n;
};

/* What lldpd says of one neighbour, as it says it (NULL: not said); the bytes of a frame. */
struct lldp_raw_neighbour {
        const char *ifname;
        const char *chassis_id, *chassis_id_subtype, *sysname;
        const char *port_id, *port_id_subtype, *port_descr;
        int mau_type;
        bool is_bridge;
};

/* The door for lldpd's values (pure): every string made valid UTF-8 without control characters
 * and cut to its field (a long or odd value changes that field, never the table). */
void lldp_neighbour_from_raw(const struct lldp_raw_neighbour *raw, struct lldp_neighbour *out);
/* This node's chassis as lldpd advertises it, through the same door. */
void lldp_table_set_chassis(struct lldp_table *t, const char *id, const char *name);

void lldp_table_clear(struct lldp_table *t);
/* A deep copy; -ENOMEM. */
int lldp_table_copy(const struct lldp_table *from, struct lldp_table *to);
bool lldp_table_equal(const struct lldp_table *a, const struct lldp_table *b);
/* "running", "absent" (not installed too) or "error: TEXT", as the neighbours section says it. */
void lldp_table_status(const struct lldp_table *t, char *buf, size_t size);
/* The same in a sentence that says why, as the neighbours section's lldpd_detail and the doctor
 * say it: "lldpd runs", "lldpd is not running: nothing answers on PATH", "lldpd is not installed:
 * WHY", "lldpd cannot be read: TEXT". */
void lldp_table_detail(const struct lldp_table *t, char *buf, size_t size);
/* The Ethernet speed of an IEEE 802.3 MAU type (IANA-MAU-MIB, lldp-const.h) in Mb/s; -1 when
 * the type is 0 (not advertised) or not one this table knows. */
int64_t lldp_mau_speed_mbps(int mau_type);
