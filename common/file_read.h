/*
 * Reading a file that someone else may have put there (config, drop-ins, the cluster key, state
 * files): only a regular file of bounded size is read. A FIFO would block the reader for good, a
 * character device (/dev/zero) or a huge file would fill memory, a directory has no text: each
 * is refused with the path and the reason, and open never waits.
 */
#pragma once

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Reads path (relative to dirfd, AT_FDCWD for the working directory) when it is a regular file
 * of at most max_size bytes. flags are added to open's (O_NOFOLLOW to refuse a symlink).
 * Returns 0 with a NUL-terminated copy in *data (its length in *len; NUL bytes in the file are
 * kept, so compare *len with strlen when text is wanted), or a negative errno with why saying
 * "PATH is a FIFO, not a regular file", "PATH is 300 MiB; at most 1 MiB is read", or what open
 * or read said. -EFTYPE is not in errno.h: a file of the wrong type is -EINVAL, one too large
 * -EFBIG. */
int file_read_regular(int dirfd, const char *path, int flags, size_t max_size, char **data, size_t *len,
                      char *why, size_t why_size);
/* The same, also giving the file's stat (its mode and owner) where the caller checks them. */
int file_read_regular_stat(int dirfd, const char *path, int flags, size_t max_size, char **data, size_t *len,
                           struct stat *st, char *why, size_t why_size);

/* The same checks without the read: path opened read-only (O_CLOEXEC, and without blocking) when
 * it is a regular file, the fd in *ret_fd and its stat in *ret_st; errors as above. For a reader
 * that keeps the file open and reads it in place. */
int file_open_regular(int dirfd, const char *path, int flags, int *ret_fd, struct stat *ret_st, char *why,
                      size_t why_size);

/* One read(2), again when a signal interrupted it: bytes read, 0 at the end, or -errno. */
ssize_t file_read_once(int fd, void *buf, size_t size);

/* The first size bytes of path (fewer where the file is shorter), opened read-only without
 * blocking and only when it is a regular file: bytes read, or -errno (-EINVAL: not a regular
 * file). For readers of a file's header (ELF). */
ssize_t file_read_head(const char *path, void *buf, size_t size);

/* "a FIFO", "a directory", "a socket", "a character device", "a block device", "a symlink",
 * "a regular file" for a stat mode. */
const char *file_type_name(unsigned mode);

/* "300 MiB", "12 KiB", "17 bytes": a size for messages. */
void file_size_format(unsigned long long bytes, char *buf, size_t size);
