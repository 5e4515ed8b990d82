#include "sysctl.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"
#include "inventory/sysfs.h"

struct sysctl_entry {
        char *name;
        char *wanted;
        char actual[256];
        int read_error;     /* negative errno of the last read, 0 when it worked */
        char *drift_logged; /* the drifted value already reported (audit), or NULL */
        int write_error;    /* negative errno of the last failed correction, 0 otherwise */
        uint64_t corrections;
};

struct sysctl_keeper {
        struct event_base *base;
        char *root;
        enum enforce_mode mode;
        struct sysctl_entry *v;
        size_t n;
};

static int sysctl_path(const char *root, const char *name, char *path, size_t size)
{
        size_t n = (size_t)snprintf(path, size, "%s/%s", root, name);

        if (n >= size)
                return -ENAMETOOLONG;
        for (char *c = path + strlen(root) + 1; *c; c++)
                if (*c == '.')
                        *c = '/';
        return 0;
}

int sysctl_read(const char *root, const char *name, char *buf, size_t size)
{
        char path[PATH_MAX];
        int r = sysctl_path(root, name, path, sizeof(path));

        if (r < 0)
                return r;
        return sysfs_read("/", buf, size, "%s", path);
}

int sysctl_write(const char *root, const char *name, const char *value)
{
        char path[PATH_MAX];
        _cleanup_close_ int fd = -EBADF;
        size_t len = strlen(value);
        ssize_t n;
        int r = sysctl_path(root, name, path, sizeof(path));

        if (r < 0)
                return r;
        fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        /* The kernel takes the whole value in one write or refuses it. */
        n = write(fd, value, len);
        if (n < 0)
                return -errno;
        return (size_t)n == len ? 0 : -EIO;
}

/* Trims and collapses blanks into single spaces. */
static void normalize(const char *in, char *out, size_t size)
{
        size_t n = 0;
        bool blank = false;

        while (isspace((unsigned char)*in))
                in++;
        for (; *in && n + 1 < size; in++) {
                if (isspace((unsigned char)*in)) {
                        blank = true;
                        continue;
                }
                if (blank && n + 2 < size)
                        out[n++] = ' ';
                blank = false;
                out[n++] = *in;
        }
        out[n] = '\0';
}

bool sysctl_values_equal(const char *a, const char *b)
{
        char na[512], nb[512];

        normalize(a, na, sizeof(na));
        normalize(b, nb, sizeof(nb));
        return strcmp(na, nb) == 0;
}

int sysctl_keeper_new(struct event_base *base, const char *root, struct sysctl_keeper **ret)
{
        struct sysctl_keeper *k = calloc(1, sizeof(*k));

        if (!k)
                return -ENOMEM;
        k->base = base;
        k->root = strdup(root);
        if (!k->root) {
                sysctl_keeper_free(k);
                return -ENOMEM;
        }
        *ret = k;
        return 0;
}

static void entries_free(struct sysctl_entry *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(v[i].name);
                free(v[i].wanted);
                free(v[i].drift_logged);
        }
        free(v);
}

void sysctl_keeper_free(struct sysctl_keeper *k)
{
        if (!k)
                return;
        entries_free(k->v, k->n);
        free(k->root);
        free(k);
}

int sysctl_keeper_configure(struct sysctl_keeper *k, const struct sparkd_config *config)
{
        struct sysctl_entry *v = calloc(config->n_sysctls + 1, sizeof(*v));
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < config->n_sysctls; i++) {
                const struct conf_sysctl *c = &config->sysctls[i];

                if (!c->value)
                        continue;
                v[n].name = strdup(c->name);
                v[n].wanted = strdup(c->value);
                if (!v[n].name || !v[n].wanted) {
                        entries_free(v, n + 1);
                        return -ENOMEM;
                }
                /* Counters of sysctls that stay configured carry over a reload. */
                for (size_t k_i = 0; k_i < k->n; k_i++)
                        if (strcmp(k->v[k_i].name, c->name) == 0)
                                v[n].corrections = k->v[k_i].corrections;
                n++;
        }
        entries_free(k->v, k->n);
        k->v = v;
        k->n = n;
        k->mode = config->mode;
        sysctl_keeper_check(k);
        return 0;
}

static bool entry_check(struct sysctl_keeper *k, struct sysctl_entry *e)
{
        char old[sizeof(e->actual)];
        int r;

        r = sysctl_read(k->root, e->name, e->actual, sizeof(e->actual));
        if (r < 0) {
                if (r != e->read_error)
                        log_warning("sysctl %s cannot be read: %s", e->name, strerror(-r));
                e->read_error = r;
                return false;
        }
        e->read_error = 0;
        if (sysctl_values_equal(e->actual, e->wanted)) {
                free(e->drift_logged);
                e->drift_logged = NULL;
                e->write_error = 0;
                return false;
        }

        if (k->mode == ENFORCE_MODE_AUDIT) {
                if (!e->drift_logged || strcmp(e->drift_logged, e->actual) != 0) {
                        struct log_field f[] = { { "sysctl", e->name },
                                                 { "old", e->actual },
                                                 { "new", e->wanted } };

                        event_emit(EVENT_SYSCTL_DRIFT, f, ARRAY_SIZE(f),
                                   "sysctl %s is %s, config wants %s (audit mode)", e->name, e->actual,
                                   e->wanted);
                        free(e->drift_logged);
                        e->drift_logged = strdup(e->actual);
                }
                return true;
        }

        memcpy(old, e->actual, sizeof(old));
        r = sysctl_write(k->root, e->name, e->wanted);
        if (r < 0) {
                /* Said once per kind of failure; the timer keeps trying quietly. */
                if (r != e->write_error)
                        log_error("sysctl %s is %s, config wants %s, and writing it failed: %s", e->name,
                                  old, e->wanted, strerror(-r));
                e->write_error = r;
                return true;
        }
        e->write_error = 0;
        e->corrections++;
        (void)sysctl_read(k->root, e->name, e->actual, sizeof(e->actual));
        {
                struct log_field f[] = { { "sysctl", e->name }, { "old", old }, { "new", e->wanted } };

                event_emit(EVENT_SYSCTL_CORRECTED, f, ARRAY_SIZE(f), "sysctl %s was %s, set back to %s",
                           e->name, old, e->wanted);
        }
        return true;
}

size_t sysctl_keeper_count(const struct sysctl_keeper *k)
{
        return k->n;
}

unsigned sysctl_keeper_check(struct sysctl_keeper *k)
{
        unsigned drifted = 0;

        for (size_t i = 0; i < k->n; i++)
                drifted += entry_check(k, &k->v[i]);
        return drifted;
}

static enum sysctl_status entry_status(const struct sysctl_entry *e)
{
        if (e->read_error)
                return SYSCTL_UNREADABLE;
        if (sysctl_values_equal(e->actual, e->wanted))
                return SYSCTL_OK;
        return e->write_error ? SYSCTL_FAILED : SYSCTL_DRIFT;
}

int sysctl_keeper_states(const struct sysctl_keeper *k, struct sysctl_state **ret, size_t *n)
{
        struct sysctl_state *v = calloc(k->n + 1, sizeof(*v));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < k->n; i++) {
                const struct sysctl_entry *e = &k->v[i];

                v[i] = (struct sysctl_state){
                        .name = e->name,
                        .wanted = e->wanted,
                        .actual = e->read_error ? NULL : e->actual,
                        .status = entry_status(e),
                        .corrections = e->corrections,
                        .write_error = e->write_error,
                };
        }
        *ret = v;
        *n = k->n;
        return 0;
}

json_object *sysctl_keeper_to_json(const struct sysctl_keeper *k)
{
        static const char *const status_names[] = {
                [SYSCTL_OK] = "ok",
                [SYSCTL_DRIFT] = "drift",
                [SYSCTL_FAILED] = "failed",
                [SYSCTL_UNREADABLE] = "unreadable",
        };
        json_object *list = json_object_new_array();

        for (size_t i = 0; i < k->n; i++) {
                const struct sysctl_entry *e = &k->v[i];
                json_object *o = json_object_new_object();

                json_object_object_add(o, "name", json_object_new_string(e->name));
                json_object_object_add(o, "wanted", json_object_new_string(e->wanted));
                json_object_object_add(o, "actual",
                                       e->read_error ? NULL : json_object_new_string(e->actual));
                json_object_object_add(o, "state", json_object_new_string(status_names[entry_status(e)]));
                json_object_object_add(o, "corrections", json_object_new_int64((int64_t)e->corrections));
                if (e->write_error)
                        json_object_object_add(o, "error",
                                               json_object_new_string(strerror(-e->write_error)));
                json_object_array_add(list, o);
        }
        return list;
}
