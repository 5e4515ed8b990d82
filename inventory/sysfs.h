/*
 * Reading sysfs (and /proc) under one root path, so every reader can be pointed at a fixture
 * tree in tests. Values are read whole and trimmed; a missing file is -ENOENT, and a file the
 * kernel refuses to read (carrier of a down link) keeps the kernel's errno.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/macro.h"

/* Reads ROOT/PATH (printf-style) into buf, trailing whitespace removed. */
int sysfs_read(const char *root, char *buf, size_t size, const char *fmt, ...) _printf_(4, 5);
int sysfs_read_u64(const char *root, uint64_t *out, const char *fmt, ...) _printf_(3, 4);
/* The last component of the symlink ROOT/PATH (a PCI address for class/net/IF/device). */
int sysfs_link_name(const char *root, char *buf, size_t size, const char *fmt, ...) _printf_(4, 5);
/* The whole target of the symlink ROOT/PATH, as readlink gives it. */
int sysfs_link_target(const char *root, char *buf, size_t size, const char *fmt, ...) _printf_(4, 5);
/* Does ROOT/PATH exist, a dangling symlink included (a trailing "/" asks for a directory)? */
bool sysfs_exists(const char *root, const char *fmt, ...) _printf_(2, 3);
/* The names in directory ROOT/PATH, sorted, without dot entries; a NULL-terminated array. */
int sysfs_list(const char *root, char ***names, const char *fmt, ...) _printf_(3, 4);
