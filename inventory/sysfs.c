#include "sysfs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/file_read.h"
#include "common/strutil.h"

__attribute__((format(printf, 4, 0))) static int build_path(char *path, size_t size, const char *root,
                                                            const char *fmt, va_list ap)
{
        size_t n = (size_t)snprintf(path, size, "%s/", root);

        if (n >= size)
                return -ENAMETOOLONG;
        if ((size_t)vsnprintf(path + n, size - n, fmt, ap) >= size - n)
                return -ENAMETOOLONG;
        return 0;
}

static int read_whole(const char *path, char *buf, size_t size)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        size_t used = 0;

        if (fd < 0)
                return -errno;
        while (used + 1 < size) {
                ssize_t n = file_read_once(fd, buf + used, size - 1 - used);

                if (n < 0)
                        return (int)n;
                if (n == 0)
                        break;
                used += (size_t)n;
        }
        buf[used] = '\0';
        while (used > 0 && isspace((unsigned char)buf[used - 1]))
                buf[--used] = '\0';
        return 0;
}

int sysfs_read(const char *root, char *buf, size_t size, const char *fmt, ...)
{
        char path[PATH_MAX];
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = build_path(path, sizeof(path), root, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        return read_whole(path, buf, size);
}

int sysfs_read_u64(const char *root, uint64_t *out, const char *fmt, ...)
{
        char path[PATH_MAX], buf[64], *end;
        unsigned long long v;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = build_path(path, sizeof(path), root, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        r = read_whole(path, buf, sizeof(buf));
        if (r < 0)
                return r;
        if (!isdigit((unsigned char)buf[0]))
                return -EBADMSG;
        errno = 0;
        v = strtoull(buf, &end, 0);
        if (errno || *end)
                return -EBADMSG;
        *out = v;
        return 0;
}

int sysfs_link_name(const char *root, char *buf, size_t size, const char *fmt, ...)
{
        char path[PATH_MAX], target[PATH_MAX];
        const char *base;
        va_list ap;
        ssize_t n;
        int r;

        va_start(ap, fmt);
        r = build_path(path, sizeof(path), root, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        n = readlink(path, target, sizeof(target) - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';
        base = strrchr(target, '/');
        base = base ? base + 1 : target;
        if (strlen(base) >= size)
                return -ENAMETOOLONG;
        strcpy(buf, base);
        return 0;
}

int sysfs_link_target(const char *root, char *buf, size_t size, const char *fmt, ...)
{
        char path[PATH_MAX];
        va_list ap;
        ssize_t n;
        int r;

        va_start(ap, fmt);
        r = build_path(path, sizeof(path), root, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        n = readlink(path, buf, size);
        if (n < 0)
                return -errno;
        if ((size_t)n >= size)
                return -ENAMETOOLONG;
        buf[n] = '\0';
        return 0;
}

bool sysfs_exists(const char *root, const char *fmt, ...)
{
        char path[PATH_MAX];
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = build_path(path, sizeof(path), root, fmt, ap);
        va_end(ap);
        /* A dangling link exists (a device link into a tree that lacks the device). */
        return r == 0 && faccessat(AT_FDCWD, path, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

static int name_compare(const struct dirent **a, const struct dirent **b)
{
        return strcmp((*a)->d_name, (*b)->d_name);
}

static int not_dot(const struct dirent *de)
{
        return de->d_name[0] != '.';
}

int sysfs_list(const char *root, char ***names, const char *fmt, ...)
{
        char path[PATH_MAX];
        struct dirent **entries = NULL;
        char **v;
        va_list ap;
        int n, r;

        va_start(ap, fmt);
        r = build_path(path, sizeof(path), root, fmt, ap);
        va_end(ap);
        if (r < 0)
                return r;
        n = scandir(path, &entries, not_dot, name_compare);
        if (n < 0)
                return -errno;
        v = calloc((size_t)n + 1, sizeof(char *));
        for (int i = 0; i < n; i++) {
                if (v && !(v[i] = strdup(entries[i]->d_name))) {
                        strv_free(v);
                        v = NULL;
                }
                free(entries[i]);
        }
        free(entries);
        if (!v)
                return -ENOMEM;
        *names = v;
        return n;
}
