#include "host_path.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

_printf_(4, 0) static int host_vpath(char *buf, size_t size, const char *root, const char *fmt, va_list ap)
{
        size_t n = (size_t)snprintf(buf, size, "%s/", root);

        if (n >= size || (size_t)vsnprintf(buf + n, size - n, fmt, ap) >= size - n)
                return -ENAMETOOLONG;
        return 0;
}

int host_path(char *buf, size_t size, const char *root, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = host_vpath(buf, size, root, fmt, ap);
        va_end(ap);
        return r;
}

bool host_has(const char *root, mode_t type, const char *fmt, ...)
{
        char path[PATH_MAX];
        struct stat st;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = host_vpath(path, sizeof(path), root, fmt, ap);
        va_end(ap);
        return r == 0 && stat(path, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

void host_each_line(const char *root, const char *file,
                    void (*fn)(char *line, unsigned lineno, void *userdata), void *userdata)
{
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        char path[PATH_MAX];
        unsigned lineno = 0;
        size_t cap = 0;

        if (host_path(path, sizeof(path), root, "%s", file) < 0 || !(f = fopen(path, "re")))
                return;
        while (getline(&line, &cap, f) > 0)
                fn(line, ++lineno, userdata);
}
