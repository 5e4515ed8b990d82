/*
 * Driver statistics through SIOCETHTOOL: one socket and three ioctls per look.
 */
#include "driver_stats.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/macro.h"
#include "common/strutil.h"

/* Room for statistics a driver adds between the count and the values (a queue set up): the
 * kernel writes as many values as it has then, not as many as asked for. */
#define COUNT_SLACK 256

static int ethtool_ioctl(int fd, const char *ifname, void *data)
{
        struct ifreq ifr = { 0 };

        snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
        ifr.ifr_data = data;
        return ioctl(fd, SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

static int stats_count(int fd, const char *ifname, size_t *n)
{
        _cleanup_free_ struct ethtool_sset_info *info = calloc(1, sizeof(*info) + sizeof(uint32_t));
        int r;

        if (!info)
                return -ENOMEM;
        info->cmd = ETHTOOL_GSSET_INFO;
        info->sset_mask = 1ULL << ETH_SS_STATS;
        r = ethtool_ioctl(fd, ifname, info);
        if (r < 0)
                return r;
        /* The mask comes back with only the sets the driver has. */
        *n = info->sset_mask ? info->data[0] : 0;
        return 0;
}

static int stats_names(int fd, const char *ifname, size_t n, struct driver_stats *out)
{
        _cleanup_free_ struct ethtool_gstrings *names =
                calloc(1, sizeof(*names) + (n + COUNT_SLACK) * ETH_GSTRING_LEN);
        int r;

        if (!names)
                return -ENOMEM;
        names->cmd = ETHTOOL_GSTRINGS;
        names->string_set = ETH_SS_STATS;
        names->len = (uint32_t)n;
        r = ethtool_ioctl(fd, ifname, names);
        if (r < 0)
                return r;
        if (names->len != n)
                return -EAGAIN;
        for (size_t i = 0; i < n; i++)
                memcpy(out->v[i].name, names->data + i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
        return 0;
}

static int stats_values(int fd, const char *ifname, size_t n, struct driver_stats *out)
{
        _cleanup_free_ struct ethtool_stats *values =
                calloc(1, sizeof(*values) + (n + COUNT_SLACK) * sizeof(uint64_t));
        int r;

        if (!values)
                return -ENOMEM;
        values->cmd = ETHTOOL_GSTATS;
        values->n_stats = (uint32_t)n;
        r = ethtool_ioctl(fd, ifname, values);
        if (r < 0)
                return r;
        if (values->n_stats != n)
                return -EAGAIN;
        for (size_t i = 0; i < n; i++)
                out->v[i].value = values->data[i];
        return 0;
}

int driver_stats_read(const char *ifname, struct driver_stats *out)
{
        _cleanup_close_ int fd = -1;
        size_t n = 0;
        int r;

        *out = (struct driver_stats){ 0 };
        if (strlen(ifname) >= IF_NAMESIZE)
                return -ENODEV;
        fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        r = stats_count(fd, ifname, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return -EOPNOTSUPP;
        if (n > DRIVER_STATS_MAX)
                return -E2BIG;
        out->v = calloc(n, sizeof(*out->v));
        if (!out->v)
                return -ENOMEM;
        out->n = n;
        r = stats_names(fd, ifname, n, out);
        if (r >= 0)
                r = stats_values(fd, ifname, n, out);
        if (r < 0)
                driver_stats_free(out);
        return r;
}

static int parse_line(const char *line, size_t len, struct driver_stat *s)
{
        const char *colon = memchr(line, ':', len), *name = line;
        char number[32];
        size_t name_len, number_len;

        while (name < line + len && (*name == ' ' || *name == '\t'))
                name++;
        if (!colon || colon <= name)
                return -EINVAL;
        name_len = (size_t)(colon - name);
        number_len = len - (size_t)(colon + 1 - line);
        if (name_len > DRIVER_STAT_NAME_MAX || number_len >= sizeof(number))
                return -EINVAL;
        memcpy(s->name, name, name_len);
        s->name[name_len] = '\0';
        memcpy(number, colon + 1, number_len);
        number[number_len] = '\0';
        return parse_uint64(str_strip(number), 10, 0, UINT64_MAX, &s->value);
}

#define HEADER "NIC statistics:"

int driver_stats_parse(const char *text, struct driver_stats *out)
{
        int r = 0;

        *out = (struct driver_stats){ 0 };
        for (const char *line = text; *line && r >= 0;) {
                size_t len = strcspn(line, "\n");
                struct driver_stat *v;

                if (len > 0 && !(len == strlen(HEADER) && memcmp(line, HEADER, len) == 0)) {
                        v = out->n < DRIVER_STATS_MAX ? realloc(out->v, (out->n + 1) * sizeof(*v)) : NULL;
                        if (!v)
                                r = out->n < DRIVER_STATS_MAX ? -ENOMEM : -E2BIG;
                        else {
                                out->v = v;
                                r = parse_line(line, len, &v[out->n]);
                                out->n += r >= 0;
                        }
                }
                line += len + (line[len] == '\n');
        }
        if (r < 0)
                driver_stats_free(out);
        return r < 0 ? r : 0;
}

void driver_stats_free(struct driver_stats *s)
{
        free(s->v);
        *s = (struct driver_stats){ 0 };
}

const struct driver_stat *driver_stats_find(const struct driver_stats *s, const char *name)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->v[i].name, name) == 0)
                        return &s->v[i];
        return NULL;
}
