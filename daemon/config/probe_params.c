#include "probe_params.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"

/* Request, set-up on the peer, the report back: on top of every measurement. */
#define SETUP_MARGIN_SEC 15

static const struct probe_param_spec *spec_find(const struct probe_kind *kind, const char *name)
{
        for (const struct probe_param_spec *s = kind->params; s->name; s++)
                if (strcmp(s->name, name) == 0)
                        return s;
        return NULL;
}

static void describe_params(const struct probe_kind *kind, char *buf, size_t size)
{
        size_t used = 0;

        buf[0] = '\0';
        for (const struct probe_param_spec *s = kind->params; s->name && used < size; s++) {
                const char *sep = s == kind->params ? "" : ", ";
                int n;

                if (s->type == PROBE_PARAM_INTEGER)
                        n = snprintf(buf + used, size - used, "%s%s %" PRIu64 "-%" PRIu64, sep, s->name,
                                     s->min, s->max);
                else
                        n = snprintf(buf + used, size - used, "%s%s (%s%s)", sep, s->name,
                                     s->type == PROBE_PARAM_LIST ? "list of " : "", s->what);
                if (n < 0)
                        break;
                used += (size_t)n;
        }
}

static void describe_choices(const char *const *choices, char *buf, size_t size)
{
        size_t used = 0;

        buf[0] = '\0';
        for (size_t i = 0; choices && choices[i] && used < size; i++) {
                int n = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", choices[i]);

                if (n < 0)
                        break;
                used += (size_t)n;
        }
}

/* One string of a string parameter or list: its length, its characters, its choices. */
static int check_string(const struct probe_kind *kind, const struct probe_param_spec *s, json_object *v,
                        char *err, size_t err_size)
{
        const char *str = json_object_get_string(v);
        char choices[192], why[192];

        if (!json_object_is_type(v, json_type_string) ||
            (size_t)json_object_get_string_len(v) != strlen(str) || strlen(str) == 0 ||
            strlen(str) > PROBE_PARAM_STRING_MAX) {
                snprintf(err, err_size, "the %s probe's %s takes %s strings of 1 to %d characters",
                         kind->name, s->name, s->what, PROBE_PARAM_STRING_MAX);
                return -EINVAL;
        }
        if (s->choices) {
                for (size_t i = 0; s->choices[i]; i++)
                        if (strcmp(s->choices[i], str) == 0)
                                return 0;
                describe_choices(s->choices, choices, sizeof(choices));
                snprintf(err, err_size, "the %s probe's %s is one of %s, not \"%.64s\"", kind->name, s->name,
                         choices, str);
                return -EINVAL;
        }
        if (s->check && s->check(str, why, sizeof(why)) < 0) {
                snprintf(err, err_size, "the %s probe's %s: %s", kind->name, s->name, why);
                return -EINVAL;
        }
        return 0;
}

/* The part of a list item that must differ between items: an environment variable's name. */
static size_t item_key_len(const struct probe_param_spec *s, const char *item)
{
        const char *eq = s->is_environment ? strchr(item, '=') : NULL;

        return eq ? (size_t)(eq - item) : strlen(item) + 1;
}

static int check_value(const struct probe_kind *kind, const struct probe_param_spec *s, json_object *value,
                       char *err, size_t err_size)
{
        int64_t v;

        switch (s->type) {
        case PROBE_PARAM_STRING:
                return check_string(kind, s, value, err, err_size);
        case PROBE_PARAM_LIST:
                if (!json_object_is_type(value, json_type_array) ||
                    json_object_array_length(value) > (size_t)s->max) {
                        snprintf(err, err_size,
                                 "the %s probe's %s is a list of at most %" PRIu64 " %s strings", kind->name,
                                 s->name, s->max, s->what);
                        return -EINVAL;
                }
                for (size_t i = 0; i < json_object_array_length(value); i++) {
                        json_object *item = json_object_array_get_idx(value, i);
                        int r = check_string(kind, s, item, err, err_size);

                        if (r < 0)
                                return r;
                        for (size_t j = 0; j < i; j++) {
                                const char *a = json_object_get_string(item),
                                           *b = json_object_get_string(json_object_array_get_idx(value, j));
                                size_t len = item_key_len(s, a);

                                if (len == item_key_len(s, b) && strncmp(a, b, len) == 0) {
                                        snprintf(err, err_size, "the %s probe's %s names %.*s twice",
                                                 kind->name, s->name, (int)(len > 64 ? 64 : len), a);
                                        return -EINVAL;
                                }
                        }
                }
                return 0;
        default:
                v = json_object_get_int64(value);
                if (!json_object_is_type(value, json_type_int) || v < 0 || (uint64_t)v < s->min ||
                    (uint64_t)v > s->max) {
                        snprintf(err, err_size,
                                 "the %s probe's %s is an integer from %" PRIu64 " to %" PRIu64, kind->name,
                                 s->name, s->min, s->max);
                        return -ERANGE;
                }
                return 0;
        }
}

static json_object *default_value(const struct probe_param_spec *s)
{
        _cleanup_strv_ char **items = NULL;
        json_object *list;

        switch (s->type) {
        case PROBE_PARAM_STRING:
                return json_object_new_string(s->def_string);
        case PROBE_PARAM_LIST:
                list = json_object_new_array();
                if (strv_split(s->def_string, &items) < 0)
                        return list;
                for (char **i = items; i && *i; i++)
                        json_object_array_add(list, json_object_new_string(*i));
                return list;
        default:
                return json_object_new_int64((int64_t)s->def);
        }
}

int probe_kind_params(const struct probe_kind *kind, json_object *params, json_object **out, char *err,
                      size_t err_size)
{
        json_object *o;
        char known[512];
        int r;

        if (params && !json_object_is_type(params, json_type_object)) {
                snprintf(err, err_size, "the %s probe's parameters are an object", kind->name);
                return -EINVAL;
        }
        describe_params(kind, known, sizeof(known));
        if (params) {
                json_object_object_foreach(params, key, value) {
                        const struct probe_param_spec *s = spec_find(kind, key);

                        if (!s) {
                                snprintf(err, err_size, "the %s probe takes no \"%s\" (it takes %s)",
                                         kind->name, key, known);
                                return -EINVAL;
                        }
                        r = check_value(kind, s, value, err, err_size);
                        if (r < 0)
                                return r;
                }
        }
        o = json_object_new_object();
        if (!o)
                return -ENOMEM;
        for (const struct probe_param_spec *s = kind->params; s->name; s++) {
                json_object *v = NULL;

                if (params && json_object_object_get_ex(params, s->name, &v))
                        json_object_object_add(o, s->name, json_object_get(v));
                else
                        json_object_object_add(o, s->name, default_value(s));
        }
        if (kind->check_params && (r = kind->check_params(o, err, err_size)) < 0) {
                json_object_put(o);
                return r;
        }
        *out = o;
        return 0;
}

uint64_t probe_kind_param(const struct probe_kind *kind, json_object *params, const char *name)
{
        const struct probe_param_spec *s = spec_find(kind, name);
        json_object *v;

        if (params && json_object_object_get_ex(params, name, &v) && json_object_is_type(v, json_type_int))
                return (uint64_t)json_object_get_int64(v);
        return s ? s->def : 0;
}

const char *probe_kind_param_string(const struct probe_kind *kind, json_object *params, const char *name)
{
        const struct probe_param_spec *s = spec_find(kind, name);
        json_object *v;

        if (!s || s->type != PROBE_PARAM_STRING)
                return NULL;
        if (params && json_object_object_get_ex(params, name, &v) &&
            json_object_is_type(v, json_type_string))
                return json_object_get_string(v);
        return s->def_string;
}

size_t probe_kind_environment(const struct probe_kind *kind, json_object *params, const char **out,
                              size_t max)
{
        size_t n = 0;

        for (const struct probe_param_spec *s = kind->params; s->name; s++) {
                json_object *list;

                if (!s->is_environment || !json_object_object_get_ex(params, s->name, &list) ||
                    !json_object_is_type(list, json_type_array))
                        continue;
                for (size_t i = 0; i < json_object_array_length(list) && n < max; i++)
                        out[n++] = json_object_get_string(json_object_array_get_idx(list, i));
        }
        return n;
}

json_object *probe_param_to_json(const struct probe_param_spec *s)
{
        static const char *const type_names[] = { "integer", "string", "list" };
        json_object *e = json_object_new_object();

        json_object_object_add(e, "name", json_object_new_string(s->name));
        json_object_object_add(e, "type", json_object_new_string(type_names[s->type]));
        if (s->type == PROBE_PARAM_INTEGER) {
                json_object_object_add(e, "min", json_object_new_int64((int64_t)s->min));
                json_object_object_add(e, "max", json_object_new_int64((int64_t)s->max));
        } else {
                json_object_object_add(e, "what", json_object_new_string(s->what));
                if (s->type == PROBE_PARAM_LIST)
                        json_object_object_add(e, "max", json_object_new_int64((int64_t)s->max));
        }
        json_object_object_add(e, "default", default_value(s));
        if (s->choices) {
                json_object *c = json_object_new_array();

                for (size_t i = 0; s->choices[i]; i++)
                        json_object_array_add(c, json_object_new_string(s->choices[i]));
                json_object_object_add(e, "choices", c);
        }
        if (s->is_environment)
                json_object_object_add(e, "environment", json_object_new_boolean(true));
        return e;
}

static bool has_suffix(const char *s, size_t len, const char *suffix)
{
        size_t n = strlen(suffix);

        return len >= n && strncmp(s + len - n, suffix, n) == 0;
}

int probe_check_environment(const char *item, char *err, size_t err_size)
{
        const char *eq = strchr(item, '=');
        size_t len = eq ? (size_t)(eq - item) : 0;

        if (len == 0 || len > 64 || (!isalpha((unsigned char)item[0]) && item[0] != '_')) {
                snprintf(err, err_size, "\"%.64s\" is not NAME=VALUE with a variable name", item);
                return -EINVAL;
        }
        for (size_t i = 0; i < len; i++)
                if (!isalnum((unsigned char)item[i]) && item[i] != '_') {
                        snprintf(err, err_size, "\"%.*s\" is not a variable name", (int)len, item);
                        return -EINVAL;
                }
        if (strncmp(item, "NCCL_", 5) != 0 && strncmp(item, "CUDA_", 5) != 0) {
                snprintf(err, err_size, "only NCCL_ and CUDA_ variables may be set, not %.*s", (int)len,
                         item);
                return -EINVAL;
        }
        if (memmem(item, len, "PLUGIN", 6) || has_suffix(item, len, "_FILE") ||
            has_suffix(item, len, "_PATH") || has_suffix(item, len, "_DIR")) {
                snprintf(err, err_size,
                         "%.*s names a file or a plugin, which a probe does not take from the network",
                         (int)len, item);
                return -EINVAL;
        }
        for (const char *c = eq + 1; *c; c++)
                if ((unsigned char)*c < 0x20 || *c == 0x7f) {
                        snprintf(err, err_size, "the value of %.*s has control characters", (int)len, item);
                        return -EINVAL;
                }
        return 0;
}

int probe_kind_helper_args(const struct probe_kind *kind, json_object *params, enum probe_side side,
                           char **argv, size_t *n, size_t max, char (*storage)[24])
{
        for (const struct probe_param_spec *s = kind->params; s->name; s++) {
                uint64_t v = probe_kind_param(kind, params, s->name);
                json_object *list;

                if (!s->option || !(s->sides & side))
                        continue;
                if (s->type != PROBE_PARAM_INTEGER) {
                        json_object_object_get_ex(params, s->name, &list);
                        for (size_t i = 0;
                             s->type == PROBE_PARAM_LIST && list && i < json_object_array_length(list);
                             i++) {
                                if (*n + 2 >= max)
                                        return -E2BIG;
                                argv[(*n)++] = (char *)s->option;
                                argv[(*n)++] =
                                        (char *)json_object_get_string(json_object_array_get_idx(list, i));
                        }
                        if (s->type == PROBE_PARAM_STRING) {
                                if (*n + 2 >= max)
                                        return -E2BIG;
                                argv[(*n)++] = (char *)s->option;
                                argv[(*n)++] = (char *)probe_kind_param_string(kind, params, s->name);
                        }
                        continue;
                }
                if (s->is_switch && v == 0)
                        continue;
                if (*n + 2 >= max)
                        return -E2BIG;
                argv[(*n)++] = (char *)s->option;
                if (s->is_switch)
                        continue;
                snprintf(storage[*n], 24, "%" PRIu64, v);
                argv[*n] = storage[*n];
                (*n)++;
        }
        return 0;
}

unsigned probe_kind_deadline_sec(const struct probe_kind *kind, json_object *params)
{
        return kind->measure_sec(params) + kind->setup_sec + SETUP_MARGIN_SEC;
}
