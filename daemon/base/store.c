#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_read.h"
#include "common/macro.h"

/* How the last write of one file went. */
struct save_result {
        char name[NAME_MAX + 1];
        int error;         /* 0 or the negative errno of its last write */
        uint64_t sequence; /* of that write, to tell the latest failure */
};

struct store {
        char *path;
        int dirfd;
        struct save_result *saves;
        size_t n_saves;
        uint64_t n_writes;
};

static int mkdir_parents(const char *path, mode_t mode)
{
        _cleanup_free_ char *copy = strdup(path);

        if (!copy)
                return -ENOMEM;
        for (char *p = copy + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(copy, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        if (mkdir(copy, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int store_open(const char *dir, struct store **ret)
{
        struct store *s;
        int fd, r;

        r = mkdir_parents(dir, 0750);
        if (r < 0)
                return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        s = calloc(1, sizeof(*s));
        if (!s || !(s->path = strdup(dir))) {
                free(s);
                close(fd);
                return -ENOMEM;
        }
        s->dirfd = fd;
        *ret = s;
        return 0;
}

void store_close(struct store *s)
{
        if (!s)
                return;
        close(s->dirfd);
        free(s->saves);
        free(s->path);
        free(s);
}

const char *store_path(const struct store *s)
{
        return s->path;
}

/* A stream on a file that remembers why its first write failed: by the time stdio reports the
 * failure (at a later write, or at the flush) errno may long have been overwritten, and the owner
 * must be told ENOSPC or EDQUOT, not EIO. */
struct save_stream {
        int fd;
        int error; /* errno of the first failed write, or 0 */
        off_t written;
};

static ssize_t save_stream_write(void *cookie, const char *buf, size_t size)
{
        struct save_stream *s = cookie;
        size_t done = 0;

        while (done < size && s->error == 0) {
                ssize_t n = write(s->fd, buf + done, size - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        s->error = n < 0 ? errno : ENOSPC;
                else
                        done += (size_t)n;
        }
        s->written += (off_t)done;
        return s->error ? 0 : (ssize_t)done;
}

/* Only where the stream is (ftello) is asked: the file is written front to back. */
static int save_stream_seek(void *cookie, off64_t *offset, int whence)
{
        struct save_stream *s = cookie;

        if (whence != SEEK_CUR || *offset != 0) {
                errno = ESPIPE;
                return -1;
        }
        *offset = s->written;
        return 0;
}

struct buffer_writer {
        const char *data;
        size_t len;
};

static int write_buffer(FILE *f, void *userdata)
{
        const struct buffer_writer *b = userdata;

        return fwrite(b->data, 1, b->len, f) == b->len ? 0 : -EIO;
}

static int write_stream(int fd, store_writer_t writer, void *userdata)
{
        struct save_stream s = { .fd = fd };
        cookie_io_functions_t io = { .write = save_stream_write, .seek = save_stream_seek };
        FILE *f = fopencookie(&s, "w", io);
        int r;

        if (!f)
                return -errno;
        r = writer(f, userdata);
        if (fflush(f) != 0 && r == 0)
                r = -EIO;
        if (ferror(f) && r == 0)
                r = -EIO;
        (void)fclose(f);
        /* The write under the stream knows why it failed; a writer's own error (ENOMEM) stays. */
        if (s.error && (r == 0 || r == -EIO))
                r = -s.error;
        return r;
}

/* The temporary name starts with a dot and ends in .tmp: readers that glob the directory for
 * their files (node_exporter takes *.prom) never see it. */
static int write_atomic(int dirfd, const char *name, store_writer_t writer, void *userdata, mode_t mode)
{
        char tmp[NAME_MAX + 1];
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (strchr(name, '/') || snprintf(tmp, sizeof(tmp), ".%s.tmp", name) >= (int)sizeof(tmp))
                return -EINVAL;
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return -errno;
        /* The mode asked for, whatever the umask (the unit's is 0027): a file others read stays
         * readable to them. */
        r = fchmod(fd, mode) < 0 ? -errno : 0;
        if (r == 0)
                r = write_stream(fd, writer, userdata);
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (r == 0) {
                r = close(fd) < 0 ? -errno : 0;
                fd = -EBADF;
        }
        if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
                r = -errno;
        if (r < 0) {
                (void)unlinkat(dirfd, tmp, 0);
                return r;
        }
        /* The rename is durable only once the directory entry is on disk too. */
        if (fsync(dirfd) < 0)
                return -errno;
        return 0;
}

static void remember_save(struct store *s, const char *name, int error)
{
        struct save_result *v;
        size_t i;

        for (i = 0; i < s->n_saves; i++)
                if (strcmp(s->saves[i].name, name) == 0)
                        break;
        if (i == s->n_saves) {
                /* Only a failure needs an entry: a file never written has not failed either. */
                if (error == 0)
                        return;
                v = realloc(s->saves, (s->n_saves + 1) * sizeof(*v));
                if (!v)
                        return;
                s->saves = v;
                snprintf(v[i].name, sizeof(v[i].name), "%s", name);
                s->n_saves++;
        }
        s->saves[i].error = error;
        s->saves[i].sequence = ++s->n_writes;
}

int store_write(struct store *s, const char *name, const void *data, size_t len)
{
        struct buffer_writer b = { .data = data, .len = len };

        return store_write_with(s, name, write_buffer, &b);
}

int store_write_with(struct store *s, const char *name, store_writer_t writer, void *userdata)
{
        int r = write_atomic(s->dirfd, name, writer, userdata, 0640);

        remember_save(s, name, r);
        return r;
}

int store_write_private(struct store *s, const char *name, const void *data, size_t len)
{
        struct buffer_writer b = { .data = data, .len = len };
        int r = write_atomic(s->dirfd, name, write_buffer, &b, 0600);

        remember_save(s, name, r);
        return r;
}

int store_last_save(const struct store *s, const char *name)
{
        for (size_t i = 0; i < s->n_saves; i++)
                if (strcmp(s->saves[i].name, name) == 0)
                        return s->saves[i].error;
        return 0;
}

int store_save_failure(const struct store *s, const char **name)
{
        const struct save_result *latest = NULL;

        for (size_t i = 0; i < s->n_saves; i++)
                if (s->saves[i].error && (!latest || s->saves[i].sequence > latest->sequence))
                        latest = &s->saves[i];
        if (!latest)
                return 0;
        if (name)
                *name = latest->name;
        return latest->error;
}

int store_write_path(const char *path, const void *data, size_t len, mode_t mode)
{
        const char *slash = strrchr(path, '/');
        _cleanup_free_ char *dir =
                slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
        _cleanup_close_ int dirfd = -EBADF;

        struct buffer_writer b = { .data = data, .len = len };

        if (!dir)
                return -ENOMEM;
        dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd < 0)
                return -errno;
        return write_atomic(dirfd, slash ? slash + 1 : path, write_buffer, &b, mode);
}

int store_read(struct store *s, const char *name, size_t max_len, char **data, size_t *len)
{
        char why[256];
        size_t used;
        int r;

        /* Without blocking: a FIFO put in the state directory must not stop the daemon's start. */
        r = file_read_regular(s->dirfd, name, O_NOFOLLOW, max_len, data, &used, why, sizeof(why));
        if (r == -EINVAL)
                return -EBADMSG; /* not a regular file: its reader quarantines it like bad content */
        if (r < 0)
                return r;
        if (len)
                *len = used;
        return 0;
}

int store_quarantine(struct store *s, const char *name)
{
        char aside[NAME_MAX + 1];

        if (snprintf(aside, sizeof(aside), "%s.corrupt", name) >= (int)sizeof(aside))
                return -ENAMETOOLONG;
        if (renameat(s->dirfd, name, s->dirfd, aside) < 0)
                return -errno;
        return 0;
}

int store_open_file(struct store *s, const char *name, int *ret_fd, struct stat *ret_st)
{
        char why[256];
        int r = file_open_regular(s->dirfd, name, O_NOFOLLOW, ret_fd, ret_st, why, sizeof(why));

        /* A symlink or not a regular file: its reader quarantines it like bad content. */
        return r == -EINVAL || r == -ELOOP ? -EBADMSG : r;
}
