/* Members of JSON with fallbacks. */
#include "json_get.h"

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

size_t json_plain_text_length(json_object *o)
{
        /* Written as the one member of an array made for it, the text is kept on the array, which
         * goes with it; o's own text is "[" o "]" less its two brackets. */
        json_object *wrap = json_object_new_array_ext(1);
        size_t len;

        if (!wrap)
                return strlen(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        if (json_object_array_add(wrap, json_object_get(o)) < 0) {
                json_object_put(o);
                json_object_put(wrap);
                return strlen(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        }
        len = strlen(json_object_to_json_string_ext(wrap, JSON_C_TO_STRING_PLAIN));
        json_object_put(wrap);
        return len - 2;
}
