/*
 * Paths under the host root (the tree of the host being described, "/" or a fixture), and
 * whether such a path is a directory or a regular file once symlinks are followed.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "common/macro.h"

/* ROOT/PATH (printf-style) into buf; -ENAMETOOLONG when it does not fit. */
int host_path(char *buf, size_t size, const char *root, const char *fmt, ...) _printf_(4, 5);
/* Whether ROOT/PATH exists and, symlinks followed, is of the type (S_IFDIR, S_IFREG). */
bool host_has(const char *root, mode_t type, const char *fmt, ...) _printf_(3, 4);
/* Calls fn with each line of ROOT/FILE and its number (from 1); nothing when it cannot be opened. */
void host_each_line(const char *root, const char *file,
                    void (*fn)(char *line, unsigned lineno, void *userdata), void *userdata);
