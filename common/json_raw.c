#include "json_raw.h"

#include <stdlib.h>
#include <string.h>

static int write_raw(json_object *jso, struct printbuf *pb, int level, int flags)
{
        const char *text = json_object_get_userdata(jso);

        return printbuf_memappend(pb, text, (int)strlen(text));
}

static void free_raw(json_object *jso, void *userdata)
{
        free(userdata);
}

json_object *json_raw_take(char *text)
{
        /* An empty string rather than an empty object: an object has a hash table of 16 entries
         * from the start (some 800 bytes), and a cluster holds hundreds of these. */
        json_object *o = text ? json_object_new_string_len("", 0) : NULL;

        if (!o) {
                free(text);
                return NULL;
        }
        json_object_set_serializer(o, write_raw, text, free_raw);
        return o;
}

json_object *json_raw_new(const char *text)
{
        return json_raw_take(strdup(text));
}

const char *json_raw_text(json_object *value)
{
        /* Only this module sets an object's userdata, and only with its writer. */
        if (!value || !json_object_is_type(value, json_type_string) ||
            json_object_get_string_len(value) != 0)
                return NULL;
        return json_object_get_userdata(value);
}

json_object *json_raw_parsed(json_object *value)
{
        const char *text = json_raw_text(value);

        /* The text was written by json-c, from objects no deeper than its reader's limit. */
        return text ? json_tokener_parse(text) : json_object_get(value);
}
