#include "strutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "macro.h"

int parse_uint64(const char *s, int base, uint64_t min, uint64_t max, uint64_t *out)
{
        unsigned long long v;
        char *end;

        if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, base);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno || end == s || *end)
                return -EINVAL;
        if (v < min || v > max)
                return -ERANGE;
        *out = v;
        return 0;
}

int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
        static const struct {
                const char *suffix;
                uint64_t factor;
        } units[] = {
                { "", 1 },
                { "K", 1ULL << 10 },
                { "KiB", 1ULL << 10 },
                { "M", 1ULL << 20 },
                { "MiB", 1ULL << 20 },
                { "G", 1ULL << 30 },
                { "GiB", 1ULL << 30 },
        };
        unsigned long long v;
        char *end;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno)
                return -errno;
        for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
                if (strcasecmp(end, units[i].suffix) != 0)
                        continue;
                if (v > UINT64_MAX / units[i].factor)
                        return -ERANGE;
                v *= units[i].factor;
                if (v < min || v > max)
                        return -ERANGE;
                *out = v;
                return 0;
        }
        return -EINVAL;
}

int parse_double(const char *s, double min, double max, double *out)
{
        char *end;
        double v;

        if (!s || !*s || isspace((unsigned char)*s))
                return -EINVAL;
        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || *end || v != v)
                return -EINVAL;
        if (v < min || v > max)
                return -ERANGE;
        *out = v;
        return 0;
}

int parse_bool(const char *s, bool *out)
{
        static const char *const yes[] = { "1", "yes", "true", "on" };
        static const char *const no[] = { "0", "no", "false", "off" };

        for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
                if (strcasecmp(s, yes[i]) == 0) {
                        *out = true;
                        return 0;
                }
                if (strcasecmp(s, no[i]) == 0) {
                        *out = false;
                        return 0;
                }
        }
        return -EINVAL;
}

int parse_duration_usec(const char *s, uint64_t *out)
{
        static const struct {
                const char *suffix;
                uint64_t usec;
        } units[] = {
                { "us", 1ULL },       { "ms", 1000ULL },      { "s", 1000000ULL },    { "", 1000000ULL },
                { "m", 60000000ULL }, { "min", 60000000ULL }, { "h", 3600000000ULL },
        };
        unsigned long long v;
        char *end;

        if (!s || !isdigit((unsigned char)*s))
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno)
                return -ERANGE;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
                if (strcmp(end, units[i].suffix) != 0)
                        continue;
                if (v > UINT64_MAX / units[i].usec)
                        return -ERANGE;
                *out = v * units[i].usec;
                return 0;
        }
        return -EINVAL;
}

const char *format_duration_sec(uint64_t sec, char *buf, size_t size)
{
        uint64_t d = sec / 86400, h = sec / 3600 % 24, m = sec / 60 % 60, s = sec % 60;

        if (d)
                snprintf(buf, size, "%llud %lluh", (unsigned long long)d, (unsigned long long)h);
        else if (h)
                snprintf(buf, size, "%lluh %llum", (unsigned long long)h, (unsigned long long)m);
        else if (m)
                snprintf(buf, size, "%llum %llus", (unsigned long long)m, (unsigned long long)s);
        else
                snprintf(buf, size, "%llus", (unsigned long long)s);
        return buf;
}

bool str_is_empty(const char *s)
{
        return !s || !*s;
}

char *str_strip(char *s)
{
        char *end;

        while (isspace((unsigned char)*s))
                s++;
        end = s + strlen(s);
        while (end > s && isspace((unsigned char)end[-1]))
                *--end = '\0';
        return s;
}

char *str_shorten(char *s, size_t max)
{
        size_t cut;
        char *space;

        if (max < 8 || strlen(s) <= max)
                return s;
        cut = max - 3;
        while (cut > 0 && ((unsigned char)s[cut] & 0xc0) == 0x80)
                cut--; /* not inside a UTF-8 sequence */
        s[cut] = '\0';
        space = strrchr(s, ' ');
        if (space && (size_t)(space - s) > cut / 2)
                *space = '\0';
        for (size_t n = strlen(s); n > 0 && strchr(" ([{,;:-", s[n - 1]); n--)
                s[n - 1] = '\0';
        strcat(s, "...");
        return s;
}

void strv_free(char **strv)
{
        for (char **p = strv; p && *p; p++)
                free(*p);
        free(strv);
}

size_t strv_length(char *const *strv)
{
        size_t n = 0;

        while (strv && strv[n])
                n++;
        return n;
}

int strv_push(char ***strv, const char *s)
{
        size_t n = strv_length(*strv);
        char **v = realloc(*strv, (n + 2) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        *strv = v;
        v[n] = strdup(s);
        v[n + 1] = NULL;
        return v[n] ? 0 : -ENOMEM;
}

int strv_copy(char *const *from, char ***to)
{
        char **v = calloc(1, sizeof(char *));

        if (!v)
                return -ENOMEM;
        for (char *const *p = from; p && *p; p++)
                if (strv_push(&v, *p) < 0) {
                        strv_free(v);
                        return -ENOMEM;
                }
        strv_free(*to);
        *to = v;
        return 0;
}

bool strv_contains(char *const *strv, const char *s)
{
        for (char *const *p = strv; p && *p; p++)
                if (strcmp(*p, s) == 0)
                        return true;
        return false;
}

int strv_split(const char *s, char ***out)
{
        char **v = calloc(1, sizeof(char *));
        const char *p = s;

        if (!v)
                return -ENOMEM;
        while (*p) {
                size_t n;
                char *word;

                p += strspn(p, " \t,");
                n = strcspn(p, " \t,");
                if (n == 0)
                        break;
                word = strndup(p, n);
                if (!word || strv_push(&v, word) < 0) {
                        free(word);
                        strv_free(v);
                        return -ENOMEM;
                }
                free(word);
                p += n;
        }
        *out = v;
        return 0;
}
