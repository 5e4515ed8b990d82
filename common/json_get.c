/* Members of JSON with fallbacks. */
#include "json_get.h"

#include <errno.h>
#include <string.h>

const char *json_get_string(json_object *o, const char *key, const char *fallback)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : fallback;
}

int json_get_int(json_object *o, const char *key, int fallback)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && (json_object_is_type(v, json_type_int) ||
                                                         json_object_is_type(v, json_type_double))
                       ? json_object_get_int(v)
                       : fallback;
}

int json_plain_text_with(json_object *o, void (*fn)(const char *text, size_t len, void *userdata),
                         void *userdata)
{
        /* Written as the one member of an array made for it, the text is kept on the array, which
         * goes with it; o's own text is "[" o "]" less its two brackets. */
        json_object *wrap = json_object_new_array_ext(1);
        const char *text;

        if (!wrap)
                return -ENOMEM;
        if (json_object_array_add(wrap, json_object_get(o)) < 0) {
                json_object_put(o);
                json_object_put(wrap);
                return -ENOMEM;
        }
        text = json_object_to_json_string_ext(wrap, JSON_C_TO_STRING_PLAIN);
        fn(text + 1, strlen(text) - 2, userdata);
        json_object_put(wrap);
        return 0;
}

static void take_length(const char *text, size_t len, void *userdata)
{
        *(size_t *)userdata = len;
}

size_t json_plain_text_length(json_object *o)
{
        size_t len;

        if (json_plain_text_with(o, take_length, &len) < 0)
                return strlen(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        return len;
}
