/*
 * The errors and warnings a config load collects, each with the file and line it is about, so
 * that every mistake of a config is said at once and not one per attempt.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"

struct conf_error {
        char *file; /* NULL when the error is not tied to a file */
        unsigned line;
        char *message;
        bool is_warning; /* reported, but the config is still applied */
};

struct conf_errors {
        struct conf_error *v;
        size_t n;
};

/* Append one entry; file may be NULL and line 0. 0 or -ENOMEM. */
int conf_add_error(struct conf_errors *errors, const char *file, unsigned line, const char *fmt, ...)
        _printf_(4, 5);
int conf_add_warning(struct conf_errors *errors, const char *file, unsigned line, const char *fmt, ...)
        _printf_(4, 5);

void conf_errors_clear(struct conf_errors *errors);
bool conf_errors_has_error(const struct conf_errors *errors);
/* "FILE:LINE: message", "FILE: message" or "message" ("warning: " before the message for
 * warnings). Returns a malloc'ed string. */
char *conf_error_format(const struct conf_error *error);
