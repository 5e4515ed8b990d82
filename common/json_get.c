/* Members of JSON with fallbacks. */
#include "json_get.h"

#include <errno.h>
#include <stdlib.h>
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

char *json_pretty_text(json_object *o, int flags)
{
        const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | flags);
        size_t len = strlen(text), n = 0;
        char *out = malloc(len + 1);

        if (!out)
                return NULL;
        /* json-c writes no raw line break inside a string: a bracket followed by one is
         * structure, and an empty container is its bracket, a line break, an indent and its
         * closing bracket. */
        for (size_t i = 0; i < len; i++) {
                out[n++] = text[i];
                if ((text[i] == '[' || text[i] == '{') && text[i + 1] == '\n') {
                        size_t j = i + 2;
                        char close = text[i] == '[' ? ']' : '}';

                        while (text[j] == ' ' || text[j] == '\t')
                                j++;
                        if (text[j] == close) {
                                out[n++] = close;
                                i = j;
                        }
                }
        }
        out[n] = '\0';
        return out;
}
