/* The launchers' files kept current with the job plan (launcher_files.h). */
#include "launcher_files.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_read.h"
#include "common/launcher_export.h"
#include "common/macro.h"
#include "daemon/base/clock.h"
#include "daemon/base/log.h"
#include "daemon/base/store.h"

#define AFTER_CHANGE_USEC 1000000
#define RECHECK_SEC       30
#define MAX_FILE_BYTES    (64 * 1024)
#define SVD_FILE          "svd.env"

struct launcher_file {
        char name[80];  /* in the directory */
        char why[512];  /* the last refusal logged; "" while written */
        bool is_failed; /* the last write failed (logged once) */
};

struct launcher_files {
        struct fabric_api_context *fabric;
        struct event *soon, *every;
        char *directory; /* NULL: off */
        char sparkrun_name[65];
        struct launcher_file files[2]; /* by enum launcher_format */
};

static const char *format_name(enum launcher_format format)
{
        return format == LAUNCHER_SPARKRUN ? "sparkrun" : "svd";
}

/* The file's bytes, or a refusal in why. */
static int render(const struct launcher_files *w, const struct launcher_plan *p, enum launcher_format format,
                  char **text, size_t *len, char *why, size_t size)
{
        FILE *f = open_memstream(text, len);
        int r;

        if (!f)
                return -ENOMEM;
        r = format == LAUNCHER_SPARKRUN ? launcher_write_sparkrun(f, p, w->sparkrun_name, why, size)
                                        : launcher_write_svd(f, p, why, size);
        if (fclose(f) != 0 && r == 0)
                r = -ENOMEM;
        return r;
}

static bool same_as_file(const char *path, const char *text, size_t len)
{
        _cleanup_free_ char *old = NULL;
        size_t old_len;
        char why[256];

        return file_read_regular(AT_FDCWD, path, O_NOFOLLOW, MAX_FILE_BYTES, &old, &old_len, why,
                                 sizeof(why)) == 0 &&
               old_len == len && memcmp(old, text, len) == 0;
}

/* A format that cannot hold the plan leaves no file a launcher would take for current. */
static void refuse(struct launcher_files *w, struct launcher_file *file, enum launcher_format format,
                   const char *path, const char *why)
{
        bool removed = unlink(path) == 0;

        if (removed || strcmp(file->why, why) != 0)
                log_warning("export: no %s file %s%s: %s", format_name(format), path,
                            removed ? " (removed)" : "", why);
        snprintf(file->why, sizeof(file->why), "%s", why);
}

static void write_one(struct launcher_files *w, const struct launcher_plan *p, enum launcher_format format,
                      const char *plan_why, uint64_t started)
{
        struct launcher_file *file = &w->files[format];
        _cleanup_free_ char *text = NULL, *path = NULL;
        char why[512];
        size_t len = 0;
        int r;

        if (asprintf(&path, "%s/%s", w->directory, file->name) < 0)
                return;
        if (plan_why) {
                refuse(w, file, format, path, plan_why);
                return;
        }
        r = render(w, p, format, &text, &len, why, sizeof(why));
        if (r == -EINVAL) {
                refuse(w, file, format, path, why);
                return;
        }
        file->why[0] = '\0';
        if (r < 0 || same_as_file(path, text, len))
                return;
        /* Launchers run as the owners' users: the file is world-readable. */
        r = store_write_path(path, text, len, 0644);
        if (r < 0) {
                if (!file->is_failed)
                        log_warning("export: cannot write %s: %s", path, strerror(-r));
                file->is_failed = true;
                return;
        }
        file->is_failed = false;
        /* How long the loop spent on it: the facts read, both files made, this one written. */
        log_info("export: %s written for the job plan %s (%.1f ms)", path, p->digest,
                 (double)(clock_monotonic_usec() - started) / 1000);
}

static void write_files(struct launcher_files *w)
{
        _cleanup_free_ struct launcher_plan *p = NULL;
        json_object *plan = NULL, *env = NULL, *map = NULL;
        char why[512];
        const char *plan_why = NULL;
        uint64_t started = clock_monotonic_usec();
        int r;

        if (!w->directory)
                return;
        /* Made readable to the launchers' users whatever the umask (the unit's is 0027). */
        if (mkdir(w->directory, 0755) == 0 ? chmod(w->directory, 0755) < 0 : errno != EEXIST) {
                if (!w->files[0].is_failed)
                        log_warning("export: cannot make %s: %m", w->directory);
                w->files[0].is_failed = w->files[1].is_failed = true;
                return;
        }
        p = calloc(1, sizeof(*p));
        if (!p || fabric_api_job_files_input(w->fabric, &plan, &env, &map) < 0)
                return;
        r = launcher_plan_read(plan, env, p, why, sizeof(why));
        if (r == 0)
                r = launcher_plan_read_map(map, p, why, sizeof(why));
        json_object_put(plan);
        json_object_put(env);
        json_object_put(map);
        if (r < 0)
                plan_why = why;
        write_one(w, p, LAUNCHER_SPARKRUN, plan_why, started);
        write_one(w, p, LAUNCHER_SVD, plan_why, started);
}

static void on_timer(evutil_socket_t fd, short what, void *userdata)
{
        write_files(userdata);
}

void launcher_files_plan_changed(struct launcher_files *w)
{
        struct timeval after = { .tv_sec = 0, .tv_usec = AFTER_CHANGE_USEC };

        if (w && w->directory && !evtimer_pending(w->soon, NULL))
                (void)evtimer_add(w->soon, &after);
}

/* A file that leaves the set (the directory or the name changed) is not kept current: removed. */
static void remove_left(const char *old_directory, const char *old_name, const char *directory,
                        const char *name)
{
        _cleanup_free_ char *path = NULL;

        if (!old_directory ||
            (directory && strcmp(old_directory, directory) == 0 && strcmp(old_name, name) == 0))
                return;
        if (asprintf(&path, "%s/%s", old_directory, old_name) >= 0)
                (void)unlink(path);
}

static int take_config(struct launcher_files *w, const struct sparkd_config *config)
{
        struct timeval every = { .tv_sec = RECHECK_SEC };
        char *directory = config->export_directory ? strdup(config->export_directory) : NULL;
        char yaml[80];

        if (config->export_directory && !directory)
                return -ENOMEM;
        snprintf(w->sparkrun_name, sizeof(w->sparkrun_name), "%s",
                 config->export_sparkrun_name[0] ? config->export_sparkrun_name : "sparkd");
        snprintf(yaml, sizeof(yaml), "%s.yaml", w->sparkrun_name);
        remove_left(w->directory, w->files[LAUNCHER_SPARKRUN].name, directory, yaml);
        remove_left(w->directory, w->files[LAUNCHER_SVD].name, directory, SVD_FILE);
        free(w->directory);
        w->directory = directory;
        memset(w->files, 0, sizeof(w->files));
        snprintf(w->files[LAUNCHER_SPARKRUN].name, sizeof(w->files[0].name), "%s", yaml);
        snprintf(w->files[LAUNCHER_SVD].name, sizeof(w->files[0].name), "%s", SVD_FILE);
        /* Without a directory nothing is written: no timer wakes the daemon for it. */
        event_del(w->every);
        event_del(w->soon);
        if (w->directory && event_add(w->every, &every) < 0)
                return -ENOMEM;
        return 0;
}

int launcher_files_configure(struct launcher_files *w, const struct sparkd_config *config)
{
        int r = take_config(w, config);

        if (r == 0)
                write_files(w);
        return r;
}

int launcher_files_new(struct event_base *base, struct fabric_api_context *fabric,
                       const struct sparkd_config *config, struct launcher_files **ret)
{
        struct launcher_files *w = calloc(1, sizeof(*w));
        int r;

        if (!w)
                return -ENOMEM;
        w->fabric = fabric;
        w->soon = evtimer_new(base, on_timer, w);
        w->every = event_new(base, -1, EV_PERSIST, on_timer, w);
        if (!w->soon || !w->every) {
                launcher_files_free(w);
                return -ENOMEM;
        }
        r = take_config(w, config);
        if (r < 0) {
                launcher_files_free(w);
                return r;
        }
        /* The first files once the loop runs. */
        launcher_files_plan_changed(w);
        *ret = w;
        return 0;
}

void launcher_files_free(struct launcher_files *w)
{
        if (!w)
                return;
        if (w->soon)
                event_free(w->soon);
        if (w->every)
                event_free(w->every);
        free(w->directory);
        free(w);
}
