#include "file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"

const char *file_type_name(unsigned mode)
{
        switch (mode & S_IFMT) {
        case S_IFREG:
                return "a regular file";
        case S_IFDIR:
                return "a directory";
        case S_IFIFO:
                return "a FIFO";
        case S_IFSOCK:
                return "a socket";
        case S_IFCHR:
                return "a character device";
        case S_IFBLK:
                return "a block device";
        case S_IFLNK:
                return "a symlink";
        default:
                return "not a regular file";
        }
}

void file_size_format(unsigned long long bytes, char *buf, size_t size)
{
        if (bytes >= (1ULL << 30))
                snprintf(buf, size, "%.1f GiB", (double)bytes / (1ULL << 30));
        else if (bytes >= (1ULL << 20))
                snprintf(buf, size, "%.1f MiB", (double)bytes / (1ULL << 20));
        else if (bytes >= (1ULL << 10))
                snprintf(buf, size, "%.1f KiB", (double)bytes / (1ULL << 10));
        else
                snprintf(buf, size, "%llu bytes", bytes);
}

ssize_t file_read_once(int fd, void *buf, size_t size)
{
        for (;;) {
                ssize_t n = read(fd, buf, size);

                if (n >= 0)
                        return n;
                if (errno != EINTR)
                        return -errno;
        }
}

ssize_t file_read_head(const char *path, void *buf, size_t size)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        size_t have = 0;
        struct stat st;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        while (have < size) {
                ssize_t n = file_read_once(fd, (char *)buf + have, size - have);

                if (n < 0)
                        return n;
                if (n == 0)
                        break;
                have += (size_t)n;
        }
        return (ssize_t)have;
}

static int read_bounded(int fd, size_t max_size, char **data, size_t *len)
{
        _cleanup_free_ char *buf = NULL;
        size_t used = 0, cap = 0;

        for (;;) {
                ssize_t n;

                if (cap - used <= 1) {
                        /* One byte past the limit tells a file that grew after fstat from one
                         * that fits exactly; one more for the terminating NUL. */
                        size_t want = cap ? cap * 2 : 4096;
                        char *bigger;

                        if (want > max_size + 2)
                                want = max_size + 2;
                        if (want <= cap)
                                return -EFBIG;
                        bigger = realloc(buf, want);
                        if (!bigger)
                                return -ENOMEM;
                        buf = bigger;
                        cap = want;
                }
                n = file_read_once(fd, buf + used, cap - used - 1);
                if (n < 0)
                        return (int)n;
                if (n == 0)
                        break;
                used += (size_t)n;
                if (used > max_size)
                        return -EFBIG;
        }
        buf[used] = '\0';
        *data = TAKE_PTR(buf);
        *len = used;
        return 0;
}

int file_open_regular(int dirfd, const char *path, int flags, int *ret_fd, struct stat *ret_st, char *why,
                      size_t why_size)
{
        _cleanup_close_ int fd = -EBADF;
        int r;

        /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, for ever. */
        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | flags);
        if (fd < 0) {
                r = -errno;
                if (r == -ELOOP && (flags & O_NOFOLLOW))
                        snprintf(why, why_size, "%s is a symlink; it must be a regular file", path);
                else
                        snprintf(why, why_size, "cannot open %s: %s", path, strerror(-r));
                return r;
        }
        if (fstat(fd, ret_st) < 0) {
                r = -errno;
                snprintf(why, why_size, "cannot stat %s: %s", path, strerror(-r));
                return r;
        }
        if (!S_ISREG(ret_st->st_mode)) {
                snprintf(why, why_size, "%s is %s, not a regular file", path,
                         file_type_name(ret_st->st_mode));
                return -EINVAL;
        }
        *ret_fd = fd;
        fd = -EBADF;
        return 0;
}

int file_read_regular_stat(int dirfd, const char *path, int flags, size_t max_size, char **data, size_t *len,
                           struct stat *ret_st, char *why, size_t why_size)
{
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        char size_text[32], max_text[32];
        int r;

        *data = NULL;
        *len = 0;
        r = file_open_regular(dirfd, path, flags, &fd, &st, why, why_size);
        if (r < 0)
                return r;
        file_size_format((unsigned long long)max_size, max_text, sizeof(max_text));
        if ((unsigned long long)st.st_size > max_size) {
                file_size_format((unsigned long long)st.st_size, size_text, sizeof(size_text));
                snprintf(why, why_size, "%s is %s; at most %s is read", path, size_text, max_text);
                return -EFBIG;
        }
        if (ret_st)
                *ret_st = st;
        r = read_bounded(fd, max_size, data, len);
        if (r == -EFBIG)
                snprintf(why, why_size, "%s grew past %s while it was read", path, max_text);
        else if (r < 0)
                snprintf(why, why_size, "cannot read %s: %s", path, strerror(-r));
        return r;
}

int file_read_regular(int dirfd, const char *path, int flags, size_t max_size, char **data, size_t *len,
                      char *why, size_t why_size)
{
        return file_read_regular_stat(dirfd, path, flags, max_size, data, len, NULL, why, why_size);
}
