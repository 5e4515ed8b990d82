/*
 * What every reader of one class/infiniband pass shares: where the scan is, so that a warning
 * says which device and port it is about, and sysfs content quoted safely in warnings.
 */
#include "rdma_scan.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "sysfs.h"

void rdma_scan_warn(struct rdma_scan *s, const char *fmt, ...)
{
        char msg[320], line[448];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (!s->dev)
                snprintf(line, sizeof(line), "%s", msg);
        else if (s->has_port)
                snprintf(line, sizeof(line), "%s port %u: %s", s->dev, s->port, msg);
        else
                snprintf(line, sizeof(line), "%s: %s", s->dev, msg);
        if (strv_push(&s->inv->warnings, line) < 0)
                s->r = -ENOMEM;
}

/* Sysfs content quoted in a warning: bounded, control characters as '?'. */
const char *rdma_scan_quote(const char *s, char *buf, size_t size)
{
        size_t i = 0;

        for (; s[i] && i + 1 < size; i++)
                buf[i] = isprint((unsigned char)s[i]) ? s[i] : '?';
        buf[i] = '\0';
        if (s[i] && size > 4)
                strcpy(buf + size - 4, "...");
        return buf;
}

bool rdma_copy_ifname(char *dst, const char *name)
{
        if (!name[0] || strlen(name) >= IF_NAMESIZE)
                return false;
        strcpy(dst, name);
        return true;
}

static int compare_unsigned(const void *a, const void *b)
{
        unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

        return (x > y) - (x < y);
}

/* A decimal number written as the kernel writes it: "01" or "+1" would name the same entry twice. */
static bool parse_index(const char *name, unsigned *out)
{
        char canonical[16];
        uint64_t v;

        if (parse_uint64(name, 10, 0, UINT32_MAX, &v) < 0)
                return false;
        snprintf(canonical, sizeof(canonical), "%u", (unsigned)v);
        if (strcmp(canonical, name) != 0)
                return false;
        *out = (unsigned)v;
        return true;
}

/*
 * The numeric entries of class/infiniband/DEV/DIR, ascending (sysfs_list sorts "10" before "2").
 * Other names are warnings: the kernel writes only numbers there, so anything else is damage.
 */
int rdma_scan_list_indexes(struct rdma_scan *s, const char *dir, const char *label, const char *what,
                           unsigned **out, size_t *n_out)
{
        char **names = NULL, q[48];
        unsigned *v;
        size_t n = 0;
        int r;

        r = sysfs_list(s->root, &names, "class/infiniband/%s/%s", s->dev, dir);
        if (r < 0)
                return r;
        v = calloc((size_t)r + 1, sizeof(*v));
        if (!v) {
                strv_free(names);
                return -ENOMEM;
        }
        for (char **name = names; *name; name++) {
                if (!parse_index(*name, &v[n])) {
                        rdma_scan_warn(s, "%s/%s is not a %s (expected a number)", label,
                                       rdma_scan_quote(*name, q, sizeof(q)), what);
                        continue;
                }
                n++;
        }
        strv_free(names);
        qsort(v, n, sizeof(*v), compare_unsigned);
        *out = v;
        *n_out = n;
        return 0;
}
