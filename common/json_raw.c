#include "json_raw.h"

#include <stdlib.h>
#include <string.h>

/* The text with its length, measured once: a 32-node cluster view writes some 600 KiB of these
 * for every call. */
struct raw {
        char *text;
        size_t len;
};

static int write_raw(json_object *jso, struct printbuf *pb, int level, int flags)
{
        const struct raw *raw = json_object_get_userdata(jso);

        return printbuf_memappend(pb, raw->text, (int)raw->len);
}

static void free_raw(json_object *jso, void *userdata)
{
        struct raw *raw = userdata;

        free(raw->text);
        free(raw);
}

json_object *json_raw_take(char *text)
{
        /* An empty string rather than an empty object: an object has a hash table of 16 entries
         * from the start (some 800 bytes), and a cluster holds hundreds of these. */
        struct raw *raw = text ? malloc(sizeof(*raw)) : NULL;
        json_object *o = raw ? json_object_new_string_len("", 0) : NULL;

        if (!o) {
                free(raw);
                free(text);
                return NULL;
        }
        *raw = (struct raw){ .text = text, .len = strlen(text) };
        json_object_set_serializer(o, write_raw, raw, free_raw);
        return o;
}

json_object *json_raw_new(const char *text)
{
        return json_raw_take(strdup(text));
}

const char *json_raw_text_length(json_object *value, size_t *len)
{
        const struct raw *raw;

        /* Only this module sets a string's userdata, and only with its writer. */
        if (!value || !json_object_is_type(value, json_type_string) ||
            json_object_get_string_len(value) != 0 || !(raw = json_object_get_userdata(value)))
                return NULL;
        if (len)
                *len = raw->len;
        return raw->text;
}

const char *json_raw_text(json_object *value)
{
        return json_raw_text_length(value, NULL);
}

json_object *json_raw_parsed(json_object *value)
{
        const char *text = json_raw_text(value);

        /* The text was written by json-c, from objects no deeper than its reader's limit. */
        return text ? json_tokener_parse(text) : json_object_get(value);
}
