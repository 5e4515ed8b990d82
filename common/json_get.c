/* Members of JSON with fallbacks. */
#include "json_get.h"

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
