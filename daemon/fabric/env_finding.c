/* One finding of env-check, with the fix each variable has by default. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "env_check_judge.h"

void env_finding(struct env_judge *j, bool is_error, const struct env_setting *s, const char *fix,
                 const char *fmt, ...)
{
        json_object *o = json_object_new_object();
        char problem[1024], own_fix[1024];
        const char *want = s ? env_suggested(j, s->name) : NULL;
        bool from_file = s && strcmp(s->source, "environment") != 0;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(problem, sizeof(problem), fmt, ap);
        va_end(ap);
        if (!fix && s) {
                /* A file's line is removed, not overridden: a rank started without this
                 * environment would get it again. */
                if (want)
                        snprintf(own_fix, sizeof(own_fix),
                                 "%sexport %s='%s' (what `sparkc env` gives this node)",
                                 from_file ? "remove that line, or " : "", s->name, want);
                else if (from_file)
                        snprintf(own_fix, sizeof(own_fix), "remove that line (`sparkc env` sets no %s here)",
                                 s->name);
                else
                        snprintf(own_fix, sizeof(own_fix), "unset %s (`sparkc env` sets none here)",
                                 s->name);
                fix = own_fix;
        }
        json_object_object_add(o, "severity", json_object_new_string(is_error ? "error" : "warning"));
        json_object_object_add(o, "variable", s ? json_object_new_string(s->name) : NULL);
        json_object_object_add(o, "value", s ? json_object_new_string(s->value) : NULL);
        json_object_object_add(o, "source", s ? json_object_new_string(s->source) : NULL);
        json_object_object_add(o, "problem", json_object_new_string(problem));
        json_object_object_add(o, "fix", json_object_new_string(fix ? fix : ""));
        json_object_array_add(j->findings, o);
        if (j->worst < (is_error ? 2 : 1))
                j->worst = is_error ? 2 : 1;
}

const char *env_suggested(const struct env_judge *j, const char *name)
{
        size_t n = j->suggested ? json_object_array_length(j->suggested) : 0;

        for (size_t i = 0; i < n; i++) {
                json_object *v = json_object_array_get_idx(j->suggested, i), *k, *val;

                if (json_object_object_get_ex(v, "name", &k) &&
                    strcmp(json_object_get_string(k), name) == 0 &&
                    json_object_object_get_ex(v, "value", &val))
                        return json_object_get_string(val);
        }
        return NULL;
}
