#include "memlock_unit.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "host_path.h"
#include "hostfacts.h"
#include "sysfs.h"

/* Where systemd looks for units, the one that wins a name first. */
static const char *const unit_dirs[] = {
        "etc/systemd/system",     "run/systemd/system", "usr/local/lib/systemd/system",
        "usr/lib/systemd/system", "lib/systemd/system",
};

int memlock_parse_unit_value(const char *value, uint64_t *out)
{
        char soft[64];

        snprintf(soft, sizeof(soft), "%.*s", (int)strcspn(value, ":"), value);
        if (strcasecmp(soft, "infinity") == 0) {
                *out = HOSTFACTS_UNLIMITED;
                return 0;
        }
        return parse_size(soft, 0, UINT64_MAX, out);
}

struct unit_file {
        const char *file;
        struct hostfacts *f;
};

/* The last LimitMEMLOCK= of one file decides, as systemd reads it; "LimitMEMLOCK=" resets. */
static void unit_line(char *line, unsigned lineno, void *userdata)
{
        struct unit_file *u = userdata;
        char *v = str_strip(line);
        uint64_t value;

        if (strncmp(v, "LimitMEMLOCK=", 13) != 0)
                return;
        v = str_strip(v + 13);
        if (!v[0]) {
                u->f->memlock_unit = 0;
                u->f->memlock_unit_source[0] = '\0';
        } else if (memlock_parse_unit_value(v, &value) == 0) {
                u->f->memlock_unit = value;
                snprintf(u->f->memlock_unit_source, sizeof(u->f->memlock_unit_source), "/%s:%u", u->file,
                         lineno);
        }
}

static void unit_read_file(const char *root, const char *file, struct hostfacts *f)
{
        struct unit_file u = { file, f };

        host_each_line(root, file, unit_line, &u);
}

static bool is_listed(char **names, size_t n, const char *name)
{
        for (size_t i = 0; i < n; i++)
                if (strcmp(names[i], name) == 0)
                        return true;
        return false;
}

/* The unit file of the first directory that has one, then every drop-in sparkd.service.d/NAME.conf
 * in name order, each from the first directory that has that name. */
int memlock_read_unit(const char *root, struct hostfacts *f)
{
        char *names[64], *dirs[64], file[PATH_MAX];
        size_t n = 0;
        int r = 0;

        for (size_t d = 0; d < ARRAY_SIZE(unit_dirs); d++) {
                snprintf(file, sizeof(file), "%s/sparkd.service", unit_dirs[d]);
                if (sysfs_exists(root, "%s", file)) {
                        unit_read_file(root, file, f);
                        break;
                }
        }
        for (size_t d = 0; d < ARRAY_SIZE(unit_dirs); d++) {
                _cleanup_strv_ char **list = NULL;

                r = sysfs_list(root, &list, "%s/sparkd.service.d", unit_dirs[d]);
                if (r == -ENOMEM)
                        goto out;
                for (char **l = r >= 0 ? list : NULL; l && *l && n < ARRAY_SIZE(names); l++) {
                        size_t len = strlen(*l);

                        if (len <= 5 || strcmp(*l + len - 5, ".conf") != 0 || is_listed(names, n, *l))
                                continue;
                        names[n] = strdup(*l);
                        dirs[n] = (char *)unit_dirs[d];
                        if (!names[n]) {
                                r = -ENOMEM;
                                goto out;
                        }
                        n++;
                }
        }
        r = 0;
        /* Sorting pairs: keep each name's directory with it. */
        for (size_t i = 0; i < n; i++)
                for (size_t k = i + 1; k < n; k++)
                        if (strcmp(names[k], names[i]) < 0) {
                                char *t = names[i], *u = dirs[i];

                                names[i] = names[k];
                                dirs[i] = dirs[k];
                                names[k] = t;
                                dirs[k] = u;
                        }
        for (size_t i = 0; i < n; i++) {
                snprintf(file, sizeof(file), "%s/sparkd.service.d/%s", dirs[i], names[i]);
                unit_read_file(root, file, f);
        }
out:
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        return r;
}
