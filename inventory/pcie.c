/*
 * PCIe link facts: four sysfs attributes and two AER counter files per function, read the same
 * way for the running system and for fixture trees.
 */
#include "pcie.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "sysfs.h"

int pcie_parse_speed(const char *s, double *gts)
{
        char *end;
        double v;

        /* "%u.%u GT/s PCIe" on current kernels, "%u GT/s" or "Unknown" on older ones. */
        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || !(v > 0) || v > 1024 || strncmp(end, " GT/s", 5) != 0 ||
            (end[5] && end[5] != ' '))
                return -EBADMSG;
        *gts = v;
        return 0;
}

int pcie_parse_aer_total(const char *s, const char *key, uint64_t *out)
{
        size_t len = strlen(key);

        /* One "NAME COUNT" per line; the total is its own line. */
        for (const char *line = s; line && *line;
             line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                char digits[24];
                size_t n;

                if (strncmp(line, key, len) != 0 || line[len] != ' ')
                        continue;
                n = strspn(line + len + 1, "0123456789");
                if (n == 0 || n >= sizeof(digits) || (line[len + 1 + n] && line[len + 1 + n] != '\n'))
                        return -EBADMSG;
                memcpy(digits, line + len + 1, n);
                digits[n] = '\0';
                return parse_uint64(digits, 10, 0, UINT64_MAX, out);
        }
        return -ENOENT;
}

static void read_speed(const char *root, const char *path, const char *attr, double *out)
{
        char buf[64];

        if (sysfs_read(root, buf, sizeof(buf), "%s/%s", path, attr) == 0)
                (void)pcie_parse_speed(buf, out);
}

static void read_width(const char *root, const char *path, const char *attr, unsigned *out)
{
        uint64_t v;

        if (sysfs_read_u64(root, &v, "%s/%s", path, attr) == 0 && v > 0 && v <= 32)
                *out = (unsigned)v;
}

void pcie_link_read(const char *root, const char *path, struct pcie_link *out)
{
        char buf[1024];

        *out = (struct pcie_link){ .aer_fatal_since_start = -1, .aer_fatal_since_last = -1 };
        read_speed(root, path, "current_link_speed", &out->speed_gts);
        read_speed(root, path, "max_link_speed", &out->max_speed_gts);
        read_width(root, path, "current_link_width", &out->width);
        read_width(root, path, "max_link_width", &out->max_width);
        out->is_known = out->speed_gts > 0 && out->max_speed_gts > 0 && out->width && out->max_width;
        out->has_aer = sysfs_read(root, buf, sizeof(buf), "%s/aer_dev_fatal", path) == 0 &&
                       pcie_parse_aer_total(buf, "TOTAL_ERR_FATAL", &out->aer_fatal) == 0 &&
                       sysfs_read(root, buf, sizeof(buf), "%s/aer_dev_nonfatal", path) == 0 &&
                       pcie_parse_aer_total(buf, "TOTAL_ERR_NONFATAL", &out->aer_nonfatal) == 0;
        if (!out->has_aer)
                out->aer_fatal = out->aer_nonfatal = 0;
}

bool pcie_link_is_spark_capable(const struct pcie_link *link)
{
        return link->is_known && link->max_speed_gts >= SPARK_RAIL_GTS &&
               link->max_width == SPARK_RAIL_WIDTH;
}

bool pcie_link_is_spark_trained(const struct pcie_link *link)
{
        return link->is_known && link->speed_gts >= SPARK_RAIL_GTS && link->width >= SPARK_RAIL_WIDTH;
}

bool pcie_link_is_degraded(const struct pcie_link *link)
{
        return link->is_known && (link->speed_gts < link->max_speed_gts || link->width < link->max_width);
}

const char *pcie_link_format(double gts, unsigned width, char *buf, size_t size)
{
        if (!(gts > 0) || !width)
                snprintf(buf, size, "unknown");
        else
                snprintf(buf, size, "%g GT/s x%u", gts, width);
        return buf;
}

static json_object *nullable_count(int64_t v)
{
        return v >= 0 ? json_object_new_int64(v) : NULL;
}

json_object *pcie_link_to_json(const struct pcie_link *link)
{
        json_object *o = json_object_new_object();

        json_object_object_add(o, "speed_gts",
                               link->speed_gts > 0 ? json_object_new_double(link->speed_gts) : NULL);
        json_object_object_add(o, "width", link->width ? json_object_new_int64(link->width) : NULL);
        json_object_object_add(o, "max_speed_gts",
                               link->max_speed_gts > 0 ? json_object_new_double(link->max_speed_gts) : NULL);
        json_object_object_add(o, "max_width",
                               link->max_width ? json_object_new_int64(link->max_width) : NULL);
        json_object_object_add(o, "degraded", json_object_new_boolean(pcie_link_is_degraded(link)));
        json_object_object_add(o, "aer_fatal",
                               link->has_aer ? json_object_new_int64((int64_t)link->aer_fatal) : NULL);
        json_object_object_add(o, "aer_nonfatal",
                               link->has_aer ? json_object_new_int64((int64_t)link->aer_nonfatal) : NULL);
        json_object_object_add(o, "aer_fatal_since_start", nullable_count(link->aer_fatal_since_start));
        json_object_object_add(o, "aer_fatal_since_last", nullable_count(link->aer_fatal_since_last));
        return o;
}
