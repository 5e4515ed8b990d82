#include "conf_errors.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_entry(struct conf_errors *errors, bool is_warning, const char *file, unsigned line,
                     const char *fmt, va_list ap)
{
        struct conf_error *v;
        char *message;

        if (vasprintf(&message, fmt, ap) < 0)
                return -ENOMEM;
        v = realloc(errors->v, (errors->n + 1) * sizeof(*v));
        if (!v) {
                free(message);
                return -ENOMEM;
        }
        errors->v = v;
        v[errors->n++] = (struct conf_error){ .file = file ? strdup(file) : NULL,
                                              .line = line,
                                              .message = message,
                                              .is_warning = is_warning };
        return 0;
}

int conf_add_error(struct conf_errors *errors, const char *file, unsigned line, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = add_entry(errors, false, file, line, fmt, ap);
        va_end(ap);
        return r;
}

int conf_add_warning(struct conf_errors *errors, const char *file, unsigned line, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = add_entry(errors, true, file, line, fmt, ap);
        va_end(ap);
        return r;
}

void conf_errors_clear(struct conf_errors *errors)
{
        for (size_t i = 0; i < errors->n; i++) {
                free(errors->v[i].file);
                free(errors->v[i].message);
        }
        free(errors->v);
        *errors = (struct conf_errors){ 0 };
}

bool conf_errors_has_error(const struct conf_errors *errors)
{
        for (size_t i = 0; i < errors->n; i++)
                if (!errors->v[i].is_warning)
                        return true;
        return false;
}

char *conf_error_format(const struct conf_error *e)
{
        const char *kind = e->is_warning ? "warning: " : "";
        char *s = NULL;
        int r;

        if (e->file && e->line)
                r = asprintf(&s, "%s:%u: %s%s", e->file, e->line, kind, e->message);
        else if (e->file)
                r = asprintf(&s, "%s: %s%s", e->file, kind, e->message);
        else
                r = asprintf(&s, "%s%s", kind, e->message);
        return r < 0 ? NULL : s;
}
