#include "api_params.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"

/* The most bytes of a request's own text quoted back in a refusal. */
#define QUOTE_MAX 64

_printf_(3, 4) static void appendf(char *buf, size_t size, const char *fmt, ...)
{
        size_t len = strnlen(buf, size);
        va_list ap;

        if (len + 1 >= size)
                return;
        va_start(ap, fmt);
        (void)vsnprintf(buf + len, size - len, fmt, ap);
        va_end(ap);
}

/* The request's text, cut to QUOTE_MAX bytes at a character boundary: a reply must stay UTF-8. */
static const char *quote(const char *s, char buf[static QUOTE_MAX + 4])
{
        size_t len = strlen(s);

        if (len <= QUOTE_MAX)
                return s;
        len = QUOTE_MAX;
        while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
                len--;
        memcpy(buf, s, len);
        memcpy(buf + len, "...", 4);
        return buf;
}

static const char *quote_json(json_object *value, char buf[static QUOTE_MAX + 4])
{
        return quote(json_object_to_json_string_ext(value,
                                                    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE),
                     buf);
}

static const char *type_name(enum api_param_type type)
{
        switch (type) {
        case API_PARAM_STRING:
                return "a string";
        case API_PARAM_INTEGER:
                return "an integer";
        case API_PARAM_BOOLEAN:
                return "true or false";
        case API_PARAM_ARRAY:
                return "an array";
        case API_PARAM_OBJECT:
                return "an object";
        }
        return "a value";
}

static bool has_type(json_object *value, enum api_param_type type)
{
        switch (type) {
        case API_PARAM_STRING:
                return json_object_is_type(value, json_type_string);
        case API_PARAM_INTEGER:
                return json_object_is_type(value, json_type_int);
        case API_PARAM_BOOLEAN:
                return json_object_is_type(value, json_type_boolean);
        case API_PARAM_ARRAY:
                return json_object_is_type(value, json_type_array);
        case API_PARAM_OBJECT:
                return json_object_is_type(value, json_type_object);
        }
        return false;
}

static bool is_choice(const char *const *choices, const char *s)
{
        for (; *choices; choices++)
                if (strcmp(*choices, s) == 0)
                        return true;
        return false;
}

static const struct api_param *param_find(const struct api_method *method, const char *name)
{
        for (const struct api_param *p = method->params; p && p->name; p++)
                if (strcmp(p->name, name) == 0)
                        return p;
        return NULL;
}

/* "peer, kind, limit", for refusals. */
static void method_takes(const struct api_method *method, char *buf, size_t size)
{
        buf[0] = '\0';
        for (const struct api_param *p = method->params; p && p->name; p++)
                appendf(buf, size, "%s%s", buf[0] ? ", " : "", p->name);
        if (method->other_params)
                appendf(buf, size, "%s%s", buf[0] ? " and " : "", method->other_params);
        if (!buf[0])
                appendf(buf, size, "no parameters");
}

static int param_check(const struct api_method *method, const struct api_param *p, json_object *value,
                       char *why, size_t size)
{
        char expected[API_PARAMS_WHY_MAX / 2], quoted[QUOTE_MAX + 4];
        bool ok = has_type(value, p->type);

        snprintf(expected, sizeof(expected), "%s", type_name(p->type));
        if (ok && p->choices && p->type == API_PARAM_STRING &&
            !is_choice(p->choices, json_object_get_string(value))) {
                snprintf(expected, sizeof(expected), "one of ");
                for (const char *const *c = p->choices; *c; c++)
                        appendf(expected, sizeof(expected), "%s%s", c == p->choices ? "" : ", ", *c);
                ok = false;
        }
        if (ok && p->check && p->check(value, expected, sizeof(expected)) < 0)
                ok = false;
        if (ok)
                return 0;
        snprintf(why, size, "%s: \"%s\" must be %s, not %s", method->name, p->name, expected,
                 quote_json(value, quoted));
        return -EINVAL;
}

/* Refuses what is not an object, and members the method does not declare. */
static int params_check_shape(const struct api_method *method, json_object *params, char *why, size_t size)
{
        char takes[API_PARAMS_WHY_MAX / 2], quoted[QUOTE_MAX + 4];

        method_takes(method, takes, sizeof(takes));
        if (!json_object_is_type(params, json_type_object)) {
                snprintf(why, size, "%s: params must be an object, not an array (%s takes %s)", method->name,
                         method->name, takes);
                return -EINVAL;
        }
        json_object_object_foreach(params, key, value) {
                (void)value;
                if (!method->other_params && !param_find(method, key)) {
                        snprintf(why, size, "%s: unknown parameter \"%s\" (%s takes %s)", method->name,
                                 quote(key, quoted), method->name, takes);
                        return -EINVAL;
                }
        }
        return 0;
}

int api_params_check(const struct api_method *method, json_object *params, json_object **checked, char *why,
                     size_t size)
{
        int r;

        *checked = NULL;
        /* By position with no positions is no params at all. */
        if (params && json_object_is_type(params, json_type_array) && json_object_array_length(params) == 0)
                params = NULL;
        if (params) {
                r = params_check_shape(method, params, why, size);
                if (r < 0)
                        return r;
        }
        for (const struct api_param *p = method->params; p && p->name; p++) {
                json_object *value;

                if (!params || !json_object_object_get_ex(params, p->name, &value)) {
                        if (!p->is_required)
                                continue;
                        snprintf(why, size, "%s: \"%s\" is missing (%s)", method->name, p->name,
                                 type_name(p->type));
                        return -EINVAL;
                }
                r = param_check(method, p, value, why, size);
                if (r < 0)
                        return r;
        }
        if (method->params || method->other_params)
                *checked = params;
        return 0;
}
