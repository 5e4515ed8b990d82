#include "lldp_table.h"

#include <errno.h>
#include <lldp-const.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"

static void clean(char *dst, size_t size, const char *s)
{
        text_clean(dst, size, s ? s : "", s ? strlen(s) : 0);
}

void lldp_neighbour_from_raw(const struct lldp_raw_neighbour *raw, struct lldp_neighbour *out)
{
        *out = (struct lldp_neighbour){ 0 };
        clean(out->ifname, sizeof(out->ifname), raw->ifname);
        clean(out->chassis_id, sizeof(out->chassis_id), raw->chassis_id);
        clean(out->chassis_id_subtype, sizeof(out->chassis_id_subtype), raw->chassis_id_subtype);
        clean(out->sysname, sizeof(out->sysname), raw->sysname);
        clean(out->port_id, sizeof(out->port_id), raw->port_id);
        clean(out->port_id_subtype, sizeof(out->port_id_subtype), raw->port_id_subtype);
        clean(out->port_descr, sizeof(out->port_descr), raw->port_descr);
        out->speed_mbps = lldp_mau_speed_mbps(raw->mau_type);
        out->is_bridge = raw->is_bridge;
}

void lldp_table_set_chassis(struct lldp_table *t, const char *id, const char *name)
{
        t->has_chassis = true;
        clean(t->chassis_id, sizeof(t->chassis_id), id);
        clean(t->chassis_name, sizeof(t->chassis_name), name);
}

void lldp_table_clear(struct lldp_table *t)
{
        free(t->v);
        *t = (struct lldp_table){ 0 };
}

int lldp_table_copy(const struct lldp_table *from, struct lldp_table *to)
{
        *to = *from;
        to->v = NULL;
        if (from->n == 0)
                return 0;
        to->v = calloc(from->n, sizeof(*to->v));
        if (!to->v) {
                to->n = 0;
                return -ENOMEM;
        }
        memcpy(to->v, from->v, from->n * sizeof(*to->v));
        return 0;
}

static bool neighbour_equal(const struct lldp_neighbour *a, const struct lldp_neighbour *b)
{
        return strcmp(a->ifname, b->ifname) == 0 && strcmp(a->chassis_id, b->chassis_id) == 0 &&
               strcmp(a->chassis_id_subtype, b->chassis_id_subtype) == 0 &&
               strcmp(a->sysname, b->sysname) == 0 && strcmp(a->port_id, b->port_id) == 0 &&
               strcmp(a->port_id_subtype, b->port_id_subtype) == 0 &&
               strcmp(a->port_descr, b->port_descr) == 0 && a->speed_mbps == b->speed_mbps &&
               a->is_bridge == b->is_bridge;
}

bool lldp_table_equal(const struct lldp_table *a, const struct lldp_table *b)
{
        if (a->status != b->status || strcmp(a->error, b->error) != 0 || a->has_chassis != b->has_chassis ||
            strcmp(a->chassis_id, b->chassis_id) != 0 || strcmp(a->chassis_name, b->chassis_name) != 0 ||
            a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (!neighbour_equal(&a->v[i], &b->v[i]))
                        return false;
        return true;
}

void lldp_table_status(const struct lldp_table *t, char *buf, size_t size)
{
        switch (t->status) {
        case LLDP_RUNNING:
                snprintf(buf, size, "running");
                return;
        case LLDP_ABSENT:
        case LLDP_NOT_INSTALLED:
                snprintf(buf, size, "absent");
                return;
        case LLDP_ERROR:
        default:
                snprintf(buf, size, "error: %s", t->error[0] ? t->error : "unknown");
                return;
        }
}

void lldp_table_detail(const struct lldp_table *t, char *buf, size_t size)
{
        switch (t->status) {
        case LLDP_RUNNING:
                snprintf(buf, size, "lldpd runs");
                return;
        case LLDP_ABSENT:
                snprintf(buf, size, "lldpd is not running: %s", t->error[0] ? t->error : "nothing answers");
                return;
        case LLDP_NOT_INSTALLED:
                snprintf(buf, size, "lldpd is not installed: %s", t->error);
                return;
        case LLDP_ERROR:
        default:
                snprintf(buf, size, "lldpd cannot be read: %s", t->error[0] ? t->error : "unknown");
                return;
        }
}

/* Ranges of MAU types of one speed, in IANA-MAU-MIB order. */
static const struct {
        int first, last;
        int64_t mbps;
} mau_speeds[] = {
        { LLDP_DOT3_MAU_AUI, LLDP_DOT3_MAU_10BASEFLFD, 10 },
        { LLDP_DOT3_MAU_100BASET4, LLDP_DOT3_MAU_100BASET2FD, 100 },
        { LLDP_DOT3_MAU_1000BASEXHD, LLDP_DOT3_MAU_1000BASETFD, 1000 },
        { LLDP_DOT3_MAU_10GIGBASEX, LLDP_DOT3_MAU_10GIGBASECX4, 10000 },
        { LLDP_DOT3_MAU_2BASETL, LLDP_DOT3_MAU_2BASETL, 2 },
        { LLDP_DOT3_MAU_10PASSTS, LLDP_DOT3_MAU_10PASSTS, 10 },
        { LLDP_DOT3_MAU_100BASEBX10D, LLDP_DOT3_MAU_100BASELX10, 100 },
        { LLDP_DOT3_MAU_1000BASEBX10D, LLDP_DOT3_MAU_1000BASEPX20U, 1000 },
        { LLDP_DOT3_MAU_10GBASET, LLDP_DOT3_MAU_10GBASELRM, 10000 },
        { LLDP_DOT3_MAU_1000BASEKX, LLDP_DOT3_MAU_1000BASEKX, 1000 },
        { LLDP_DOT3_MAU_10GBASEKX4, LLDP_DOT3_MAU_10GBASEPRU3, 10000 },
        { LLDP_DOT3_MAU_40GBASEKR4, LLDP_DOT3_MAU_40GBASELR4, 40000 },
        { LLDP_DOT3_MAU_100GBASECR10, LLDP_DOT3_MAU_100GBASEER4, 100000 },
        { LLDP_DOT3_MAU_1000BASET1, LLDP_DOT3_MAU_1000BASEPX40U, 1000 },
        { LLDP_DOT3_MAU_10G1GBASEPRXD4, LLDP_DOT3_MAU_10GBASEPRU4, 10000 },
        { LLDP_DOT3_MAU_25GBASECR, LLDP_DOT3_MAU_25GBASET, 25000 },
        { LLDP_DOT3_MAU_40GBASEER4, LLDP_DOT3_MAU_40GBASET, 40000 },
        { LLDP_DOT3_MAU_100GBASECR4, LLDP_DOT3_MAU_100GBASESR4, 100000 },
        { LLDP_DOT3_MAU_2P5GIGT, LLDP_DOT3_MAU_2P5GIGT, 2500 },
        { LLDP_DOT3_MAU_5GIGT, LLDP_DOT3_MAU_5GIGT, 5000 },
        { LLDP_DOT3_MAU_100BASET1, LLDP_DOT3_MAU_100BASET1, 100 },
        { LLDP_DOT3_MAU_1000BASERHA, LLDP_DOT3_MAU_1000BASERHC, 1000 },
        { LLDP_DOT3_MAU_2P5GBASEKX, LLDP_DOT3_MAU_2P5GBASEX, 2500 },
        { LLDP_DOT3_MAU_5GBASEKR, LLDP_DOT3_MAU_5GBASER, 5000 },
        { LLDP_DOT3_MAU_10GPASSXR, LLDP_DOT3_MAU_10GPASSXR, 10000 },
        { LLDP_DOT3_MAU_25GBASELR, LLDP_DOT3_MAU_25GBASEER, 25000 },
        { LLDP_DOT3_MAU_50GBASER, LLDP_DOT3_MAU_50GBASEER, 50000 },
        { LLDP_DOT3_MAU_100GBASECR2, LLDP_DOT3_MAU_100GBASEDR, 100000 },
        { LLDP_DOT3_MAU_200GBASER, LLDP_DOT3_MAU_200GBASEER4, 200000 },
        { LLDP_DOT3_MAU_400GBASER, LLDP_DOT3_MAU_400GBASEER8, 400000 },
        { LLDP_DOT3_MAU_10BASET1L, LLDP_DOT3_MAU_10BASET1SFD, 10 },
};

int64_t lldp_mau_speed_mbps(int mau_type)
{
        for (size_t i = 0; i < ARRAY_SIZE(mau_speeds); i++)
                if (mau_type >= mau_speeds[i].first && mau_type <= mau_speeds[i].last)
                        return mau_speeds[i].mbps;
        return -1;
}
