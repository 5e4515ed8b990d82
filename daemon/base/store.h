/*
 * The state directory: small files written atomically (temporary file, fsync, rename, fsync of
 * the directory) so that a crash at any moment leaves the old or the new content, never a mix,
 * and read back at start. Content that fails its reader's check is moved aside, not trusted.
 * Every file the daemon writes to disk goes through the same atomic write. The store remembers
 * how the last write of each of its files went, so that "state is saved" is a fact, not a hope.
 */
#pragma once

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

struct store;

/* Creates dir (and missing parents) with mode 0750 when needed. */
int store_open(const char *dir, struct store **ret);
void store_close(struct store *store);
const char *store_path(const struct store *store);

/* Also remembered as name's last save (see store_save_failure). */
int store_write(struct store *store, const char *name, const void *data, size_t len);
/* The same with mode 0600, for a secret (the node's private key). */
int store_write_private(struct store *store, const char *name, const void *data, size_t len);
/* Writes the content for store_write_with into f: 0, or a negative errno that abandons the
 * write. An error of f itself is found after it returns. */
typedef int (*store_writer_t)(FILE *f, void *userdata);
/* The same atomic write for content made while it is written, rather than held whole first. */
int store_write_with(struct store *store, const char *name, store_writer_t writer, void *userdata);
/* 0 while every file's last save succeeded; otherwise the error of the file whose failed save is
 * the latest, its name in *name. */
int store_save_failure(const struct store *store, const char **name);
/* How name's last save went: 0 (or never written), or its negative errno. A writer logs a failing
 * save once, when this was 0, and the recovery when it was not. */
int store_last_save(const struct store *store, const char *name);
/* The same atomic write for a file outside the state directory that other programs read (the
 * metrics textfile); mode is the file's when it is created. */
int store_write_path(const char *path, const void *data, size_t len, mode_t mode);
/* Reads name whole into a NUL-terminated buffer; -ENOENT when absent, -EFBIG over max_len. */
int store_read(struct store *store, const char *name, size_t max_len, char **data, size_t *len);
/* name opened for reading (O_CLOEXEC) when it is a regular file, its stat in *ret_st; -EBADMSG
 * when it is not (a symlink, a FIFO), -ENOENT when absent. A reader that keeps it open reads the
 * content it opened even after a later write replaced the file. */
int store_open_file(struct store *store, const char *name, int *ret_fd, struct stat *ret_st);
/* Renames name to name.corrupt so a fresh one can be written while the evidence is kept. */
int store_quarantine(struct store *store, const char *name);
