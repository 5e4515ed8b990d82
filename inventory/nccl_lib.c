#include "nccl_lib.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "dotted_version.h"
#include "elf_machine.h"
#include "host_path.h"
#include "hostfacts.h"
#include "sysfs.h"

/* Where a libnccl.so.2 may be, in the order the search goes, and its nccl.h "next to it". */
struct nccl_dir {
        const char *lib;
        const char *include;
        bool is_packaged; /* where Debian's libnccl2 puts it: only then is dpkg's version this copy's */
};

static const struct nccl_dir nccl_dirs[] = {
        { "usr/lib/x86_64-linux-gnu", "usr/include", true },
        { "usr/lib/aarch64-linux-gnu", "usr/include", true },
        { "usr/lib64", "usr/include", true },
        { "usr/lib", "usr/include", true },
        { "usr/local/lib", "usr/local/include", false },
        { "usr/local/cuda/lib64", "usr/local/cuda/include", false },
        /* then usr/local/cuda/targets/<each>/lib, see nccl_find() */
};

static inline void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

/* NCCL_MAJOR/MINOR/PATCH from ROOT/INCLUDE/nccl.h. */
static int nccl_header_version(const char *root, const char *include, char *version, size_t size)
{
        static const char *const names[] = { "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH" };
        _cleanup_fclose_ FILE *file = NULL;
        _cleanup_free_ char *line = NULL;
        long v[] = { -1, -1, -1 };
        char path[PATH_MAX];
        size_t cap = 0;

        if (host_path(path, sizeof(path), root, "%s/nccl.h", include) < 0)
                return -ENAMETOOLONG;
        file = fopen(path, "re");
        if (!file)
                return -errno;
        while ((v[0] < 0 || v[1] < 0 || v[2] < 0) && getline(&line, &cap, file) > 0) {
                char name[32];
                long value;

                if (sscanf(line, " #define %31s %ld", name, &value) != 2 || value < 0)
                        continue;
                for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                        if (strcmp(name, names[i]) == 0)
                                v[i] = value;
        }
        if (v[0] < 0 || v[1] < 0 || v[2] < 0)
                return -EBADMSG;
        if ((size_t)snprintf(version, size, "%ld.%ld.%ld", v[0], v[1], v[2]) >= size)
                return -ENOBUFS;
        return 0;
}

/* The upstream part of an installed libnccl2's version in dpkg's status: "2.28.9-1+cuda13.0" is 2.28.9. */
static int dpkg_nccl_version(const char *root, char *version, size_t size)
{
        _cleanup_fclose_ FILE *file = NULL;
        _cleanup_free_ char *line = NULL;
        bool is_nccl = false, is_installed = false;
        char path[PATH_MAX], found[64] = "";
        size_t cap = 0;

        if (host_path(path, sizeof(path), root, "var/lib/dpkg/status") < 0)
                return -ENAMETOOLONG;
        file = fopen(path, "re");
        if (!file)
                return -errno;
        for (;;) {
                ssize_t n = getline(&line, &cap, file);
                char *s = n > 0 ? str_strip(line) : NULL;

                if (!s || !*s) { /* end of a paragraph */
                        if (is_nccl && is_installed && found[0]) {
                                char *upstream = strchr(found, ':') ? strchr(found, ':') + 1 : found;
                                char *revision = strrchr(upstream, '-');

                                if (revision)
                                        *revision = '\0';
                                if (!dotted_version_is(upstream, strlen(upstream)))
                                        return -EBADMSG;
                                return dotted_version_copy(version, size, upstream, strlen(upstream));
                        }
                        if (!s)
                                return -ENOENT;
                        is_nccl = is_installed = false;
                        found[0] = '\0';
                        continue;
                }
                if (line[0] == ' ' || line[0] == '\t') /* a continuation line */
                        continue;
                if (strncmp(s, "Package:", 8) == 0)
                        is_nccl = strcmp(str_strip(s + 8), "libnccl2") == 0;
                else if (strncmp(s, "Status:", 7) == 0) {
                        const char *status = str_strip(s + 7);
                        size_t len = strlen(status);

                        is_installed = len >= 12 && strcmp(status + len - 12, "ok installed") == 0;
                } else if (strncmp(s, "Version:", 8) == 0)
                        snprintf(found, sizeof(found), "%s", str_strip(s + 8));
        }
}

/* The version in a file name "libnccl.so.2.28.9" (or a path ending in one). */
static const char *nccl_name_version(const char *name)
{
        static const char prefix[] = "libnccl.so.";
        const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;

        if (strncmp(base, prefix, strlen(prefix)) != 0 || strncmp(base + strlen(prefix), "2.", 2) != 0)
                return NULL;
        base += strlen(prefix);
        return dotted_version_is(base, strlen(base)) && strchr(base, '.') != strrchr(base, '.') ? base
                                                                                                : NULL;
}

/* The names in a library directory that may be NCCL's, as last read, and the directory as it was
 * then: the doctor looks every 2 s, and /usr/lib/<arch> holds over a thousand names, whose
 * readdir was 2% of a daemon's time at 32 nodes. Any name added, removed or renamed changes the
 * directory's modification and change times (the first may be set back, the second not); one
 * read less than 2 s after such a change is read again next time, as a change in the same clock
 * tick would leave the times as they were. */
struct nccl_dir_names {
        char *path;
        dev_t dev;
        ino_t ino;
        struct timespec mtime, ctime;
        bool is_settled;
        char **names;
        size_t n;
};

static struct nccl_dir_names dir_cache[16];
static size_t dir_cache_next;

static void dir_names_clear(struct nccl_dir_names *e)
{
        for (size_t i = 0; i < e->n; i++)
                free(e->names[i]);
        free(e->names);
        free(e->path);
        *e = (struct nccl_dir_names){ 0 };
}

static int dir_names_read(const char *path, struct nccl_dir_names *e)
{
        _cleanup_(closedirp) DIR *d = opendir(path);
        struct dirent *de;

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char **v;

                if (!nccl_name_version(de->d_name))
                        continue;
                v = realloc(e->names, (e->n + 1) * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                e->names = v;
                if (!(e->names[e->n] = strdup(de->d_name)))
                        return -ENOMEM;
                e->n++;
        }
        return 0;
}

static bool timespec_equal(struct timespec a, struct timespec b)
{
        return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Whether now is at least 2 s after t. */
static bool is_2s_after(struct timespec now, struct timespec t)
{
        return now.tv_sec - t.tv_sec > 2 || (now.tv_sec - t.tv_sec == 2 && now.tv_nsec >= t.tv_nsec);
}

/* The names of path (a directory, st its stat) that may be NCCL's into *ret. -ENOMEM, or another
 * negative errno when it cannot be read. */
static int dir_names(const char *path, const struct stat *st, const struct nccl_dir_names **ret)
{
        struct nccl_dir_names *e = NULL;
        struct timespec now;
        int r;

        for (size_t i = 0; i < ARRAY_SIZE(dir_cache) && !e; i++)
                if (dir_cache[i].path && strcmp(dir_cache[i].path, path) == 0)
                        e = &dir_cache[i];
        if (e && e->is_settled && e->dev == st->st_dev && e->ino == st->st_ino &&
            timespec_equal(e->mtime, st->st_mtim) && timespec_equal(e->ctime, st->st_ctim)) {
                *ret = e;
                return 0;
        }
        if (!e) {
                e = &dir_cache[dir_cache_next];
                dir_cache_next = (dir_cache_next + 1) % ARRAY_SIZE(dir_cache);
        }
        dir_names_clear(e);
        if (clock_gettime(CLOCK_REALTIME, &now) < 0)
                return -errno;
        e->path = strdup(path);
        r = e->path ? dir_names_read(path, e) : -ENOMEM;
        if (r < 0) {
                dir_names_clear(e);
                return r;
        }
        e->dev = st->st_dev;
        e->ino = st->st_ino;
        e->mtime = st->st_mtim;
        e->ctime = st->st_ctim;
        e->is_settled = is_2s_after(now, st->st_mtim);
        *ret = e;
        return 0;
}

/* Looks for libnccl.so.2 or libnccl.so.2.X.Y in ROOT/DIR; 1 when found (facts filled), 0 when
 * not, -ENOMEM. */
static int nccl_look_in(const char *root, const char *dir, const char *include, bool is_packaged,
                        struct hostfacts *f)
{
        char path[PATH_MAX], newest[NAME_MAX + 1] = "", target[PATH_MAX];
        const struct nccl_dir_names *names = NULL;
        const char *version = NULL;
        bool has_soname;
        struct stat st;
        ssize_t n;
        int r;

        if (host_path(path, sizeof(path), root, "%s", dir) < 0 || stat(path, &st) < 0 ||
            !S_ISDIR(st.st_mode))
                return 0;
        r = dir_names(path, &st, &names);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        for (size_t i = 0; i < names->n; i++) {
                const char *name = names->names[i];

                if (!host_has(root, S_IFREG, "%s/%s", dir, name))
                        continue;
                if (!newest[0] || strverscmp(name, newest) > 0)
                        snprintf(newest, sizeof(newest), "%s", name);
        }
        has_soname = host_has(root, S_IFREG, "%s/libnccl.so.2", dir);
        if (!has_soname && !newest[0])
                return 0;

        if ((size_t)snprintf(f->nccl_path, sizeof(f->nccl_path), "/%s/%s", dir,
                             has_soname ? "libnccl.so.2" : newest) >= sizeof(f->nccl_path)) {
                f->nccl_path[0] = '\0';
                return 0;
        }
        f->has_nccl = true;
        /* The machine of the file the loader would map (a link followed to its target). */
        if (host_path(path, sizeof(path), root, "%s", f->nccl_path + 1) == 0)
                f->nccl_machine_error = elf_machine_read(path, &f->nccl_machine);
        else
                f->nccl_machine_error = -ENAMETOOLONG;
        if (f->nccl_machine_error < 0)
                f->nccl_machine = (struct elf_machine){ 0 };
        /* The version in a name counts only for the file the loader takes: the one libnccl.so.2
         * links to, or the newest when there is no libnccl.so.2. A plain libnccl.so.2 (CUDA's
         * tarball layout) names none; then the header beside it, then dpkg. */
        if (has_soname) {
                if (host_path(path, sizeof(path), root, "%s/libnccl.so.2", dir) == 0 &&
                    (n = readlink(path, target, sizeof(target) - 1)) > 0) {
                        target[n] = '\0';
                        version = nccl_name_version(target);
                }
        } else
                version = nccl_name_version(newest);
        if (version &&
            dotted_version_copy(f->nccl_version, sizeof(f->nccl_version), version, strlen(version)) == 0)
                return 1;
        if (nccl_header_version(root, include, f->nccl_version, sizeof(f->nccl_version)) == 0)
                return 1;
        if (!is_packaged || dpkg_nccl_version(root, f->nccl_version, sizeof(f->nccl_version)) < 0)
                f->nccl_version[0] = '\0';
        return 1;
}

int nccl_lib_find(const char *root, struct hostfacts *f)
{
        _cleanup_strv_ char **targets = NULL;
        int r;

        for (size_t i = 0; i < ARRAY_SIZE(nccl_dirs); i++) {
                r = nccl_look_in(root, nccl_dirs[i].lib, nccl_dirs[i].include, nccl_dirs[i].is_packaged, f);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        r = sysfs_list(root, &targets, "usr/local/cuda/targets");
        if (r == -ENOMEM)
                return r;
        for (char **t = r >= 0 ? targets : NULL; t && *t; t++) {
                char lib[PATH_MAX], include[PATH_MAX];

                snprintf(lib, sizeof(lib), "usr/local/cuda/targets/%s/lib", *t);
                snprintf(include, sizeof(include), "usr/local/cuda/targets/%s/include", *t);
                r = nccl_look_in(root, lib, include, false, f);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        return 0;
}
