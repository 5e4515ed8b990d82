/*
 * The state directory: small files written atomically (temporary file, fsync, rename, fsync of
 * the directory) so that a crash at any moment leaves the old or the new content, never a mix,
 * and read back at start. Content that fails its reader's check is moved aside, not trusted.
 * Every file the daemon writes to disk goes through the same atomic write.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

struct store;

/* Creates dir (and missing parents) with mode 0750 when needed. */
int store_open(const char *dir, struct store **ret);
void store_close(struct store *store);
const char *store_path(const struct store *store);

int store_write(struct store *store, const char *name, const void *data, size_t len);
/* The same atomic write for a file outside the state directory that other programs read (the
 * metrics textfile); mode is the file's when it is created. */
int store_write_path(const char *path, const void *data, size_t len, mode_t mode);
/* Reads name whole into a NUL-terminated buffer; -ENOENT when absent, -EFBIG over max_len. */
int store_read(struct store *store, const char *name, size_t max_len, char **data, size_t *len);
/* Renames name to name.corrupt so a fresh one can be written while the evidence is kept. */
int store_quarantine(struct store *store, const char *name);
