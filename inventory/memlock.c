#include "memlock.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "host_path.h"
#include "hostfacts.h"
#include "sysfs.h"

/*
 * pam_limits' rules: "#" starts a comment anywhere; a line is "domain type item value"; type and
 * item are case-insensitive; "-1", "-", "unlimited" and "infinity" mean no limit; a number is
 * KiB, and one too large for bytes is no limit either.
 */
int hostfacts_parse_limits_line(const char *line, uint64_t *memlock)
{
        char buf[512], *fields[5], *save = NULL;
        const char *value;
        size_t n = 0;
        uint64_t kib;
        int which;

        if (strlen(line) >= sizeof(buf))
                return -EINVAL;
        strcpy(buf, line);
        buf[strcspn(buf, "#")] = '\0';
        for (char *w = strtok_r(buf, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
                if (n == ARRAY_SIZE(fields))
                        return -EINVAL;
                fields[n++] = w;
        }
        if (n == 0)
                return 0;
        if (n != 4)
                return -EINVAL;
        /* Only "*" applies to every login; users, @groups, %groups and uid ranges are someone's. */
        if (strcasecmp(fields[2], "memlock") != 0 || strcmp(fields[0], "*") != 0)
                return 0;
        if (strcasecmp(fields[1], "soft") == 0)
                which = HOSTFACTS_LIMIT_SOFT;
        else if (strcasecmp(fields[1], "hard") == 0)
                which = HOSTFACTS_LIMIT_HARD;
        else if (strcmp(fields[1], "-") == 0)
                which = HOSTFACTS_LIMIT_SOFT | HOSTFACTS_LIMIT_HARD;
        else
                return -EINVAL;
        value = fields[3];
        if (strcmp(value, "-1") == 0 || strcmp(value, "-") == 0 || strcasecmp(value, "unlimited") == 0 ||
            strcasecmp(value, "infinity") == 0)
                *memlock = HOSTFACTS_UNLIMITED;
        else if (parse_uint64(value, 10, 0, UINT64_MAX, &kib) < 0)
                return -EINVAL;
        else
                *memlock = kib >= UINT64_MAX / 1024 ? HOSTFACTS_UNLIMITED : kib * 1024;
        return which;
}

struct limit_seen {
        bool is_set;
        uint64_t value;
        char source[256];
};

static void limit_set(struct limit_seen *l, uint64_t value, const char *file, unsigned lineno)
{
        l->is_set = true;
        l->value = value;
        snprintf(l->source, sizeof(l->source), "/%s:%u", file, lineno);
}

struct limits_file {
        const char *file;
        struct limit_seen *soft, *hard;
};

static void limits_line(char *line, unsigned lineno, void *userdata)
{
        struct limits_file *lf = userdata;
        uint64_t value;
        int which = hostfacts_parse_limits_line(line, &value);

        /* pam_limits skips malformed lines too */
        if (which > 0 && (which & HOSTFACTS_LIMIT_SOFT))
                limit_set(lf->soft, value, lf->file, lineno);
        if (which > 0 && (which & HOSTFACTS_LIMIT_HARD))
                limit_set(lf->hard, value, lf->file, lineno);
}

static void limits_read_file(const char *root, const char *file, struct limit_seen *soft,
                             struct limit_seen *hard)
{
        struct limits_file lf = { file, soft, hard };

        host_each_line(root, file, limits_line, &lf);
}

/*
 * limits.conf, then the .conf files in limits.d in byte order of their names, a later line
 * replacing an earlier one. A session gets the soft limit, cut down to the hard one as pam_limits
 * does. With only a hard limit set the soft one is inherited; the hard one is reported then
 * (a process may raise its soft limit up to it).
 */
int memlock_read_login(const char *root, struct hostfacts *f)
{
        _cleanup_strv_ char **names = NULL;
        struct limit_seen soft = { 0 }, hard = { 0 };
        const struct limit_seen *use = NULL;
        int r;

        limits_read_file(root, "etc/security/limits.conf", &soft, &hard);
        r = sysfs_list(root, &names, "etc/security/limits.d");
        if (r == -ENOMEM)
                return r;
        for (char **n = r >= 0 ? names : NULL; n && *n; n++) {
                char file[PATH_MAX];
                size_t len = strlen(*n);

                if (len <= 5 || strcmp(*n + len - 5, ".conf") != 0)
                        continue;
                snprintf(file, sizeof(file), "etc/security/limits.d/%s", *n);
                limits_read_file(root, file, &soft, &hard);
        }
        if (soft.is_set)
                use = hard.is_set && hard.value < soft.value ? &hard : &soft;
        else if (hard.is_set)
                use = &hard;
        if (use) {
                f->memlock_login = use->value;
                snprintf(f->memlock_login_source, sizeof(f->memlock_login_source), "%s", use->source);
        }
        f->memlock_login_soft = soft.is_set ? soft.value : 0;
        f->memlock_login_hard = hard.is_set ? hard.value : 0;
        snprintf(f->memlock_login_soft_source, sizeof(f->memlock_login_soft_source), "%s", soft.source);
        snprintf(f->memlock_login_hard_source, sizeof(f->memlock_login_hard_source), "%s", hard.source);
        return 0;
}
