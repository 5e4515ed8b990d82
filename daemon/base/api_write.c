#include "api_write.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "common/json_raw.h"

/* Held texts from this size on are queued by reference; smaller ones cost less copied than as a
 * chain of their own. */
#define API_WRITE_BY_REFERENCE (4 * 1024)

#define API_WRITE_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* The small pieces (keys, commas, numbers, short texts) gathered before they go to the buffer:
 * a 32-node cluster view is some 2,000 of them, and an evbuffer_add each was a tenth of its
 * writing. */
struct writer {
        struct evbuffer *out;
        size_t n;
        char pending[16 * 1024];
};

static void put_value(const void *data, size_t len, void *value)
{
        json_object_put(value);
}

static int flush(struct writer *w)
{
        if (w->n && evbuffer_add(w->out, w->pending, w->n) < 0)
                return -ENOMEM;
        w->n = 0;
        return 0;
}

static int add(struct writer *w, const char *text, size_t len)
{
        if (len > sizeof(w->pending) - w->n) {
                if (flush(w) < 0)
                        return -ENOMEM;
                if (len > sizeof(w->pending))
                        return evbuffer_add(w->out, text, len) < 0 ? -ENOMEM : 0;
        }
        memcpy(w->pending + w->n, text, len);
        w->n += len;
        return 0;
}

/* A value json-c writes itself: a scalar, or one with a writer of its own. */
static int write_by_json_c(struct writer *out, json_object *value)
{
        size_t len;
        const char *text = json_object_to_json_string_length(value, API_WRITE_FLAGS, &len);

        return text ? add(out, text, len) : -ENOMEM;
}

/* Whether json-c writes c in a string as it is (with slashes not escaped): printable ASCII but
 * the quote and the backslash, and every byte of a UTF-8 sequence. */
static bool is_written_as_is(unsigned char c)
{
        return c >= 0x20 && c != '"' && c != '\\';
}

/* A key as json-c writes it: one without escapes as it is, any other through json-c's escaping. */
static int write_key(struct writer *out, const char *key)
{
        size_t len = 0;
        json_object *s;
        int r;

        while (key[len] && is_written_as_is((unsigned char)key[len]))
                len++;
        if (!key[len]) {
                if (add(out, "\"", 1) < 0 || add(out, key, len) < 0)
                        return -ENOMEM;
                return add(out, "\":", 2);
        }
        s = json_object_new_string(key);
        r = s ? write_by_json_c(out, s) : -ENOMEM;
        json_object_put(s);
        return r < 0 ? r : add(out, ":", 1);
}

static int write_value(struct writer *out, json_object *value)
{
        size_t len;
        const char *raw = json_raw_text_length(value, &len);
        int r = 0;

        if (!value)
                return add(out, "null", 4);
        if (raw) {
                /* A packed text's copy lasts only to the end of this turn of the loop. */
                if (len < API_WRITE_BY_REFERENCE || json_raw_is_packed(value))
                        return add(out, raw, len);
                if (flush(out) < 0)
                        return -ENOMEM;
                if (evbuffer_add_reference(out->out, raw, len, put_value, json_object_get(value)) < 0) {
                        json_object_put(value);
                        return -ENOMEM;
                }
                return 0;
        }
        /* A container with a writer of its own (userdata set with it) is written by that writer. */
        if (json_object_get_userdata(value))
                return write_by_json_c(out, value);
        if (json_object_is_type(value, json_type_object)) {
                bool is_first = true;

                r = add(out, "{", 1);
                json_object_object_foreach(value, key, member) {
                        if (r == 0 && !is_first)
                                r = add(out, ",", 1);
                        if (r == 0)
                                r = write_key(out, key);
                        if (r == 0)
                                r = write_value(out, member);
                        is_first = false;
                }
                return r < 0 ? r : add(out, "}", 1);
        }
        if (json_object_is_type(value, json_type_array)) {
                size_t n = json_object_array_length(value);

                r = add(out, "[", 1);
                for (size_t i = 0; r == 0 && i < n; i++) {
                        if (i > 0)
                                r = add(out, ",", 1);
                        if (r == 0)
                                r = write_value(out, json_object_array_get_idx(value, i));
                }
                return r < 0 ? r : add(out, "]", 1);
        }
        return write_by_json_c(out, value);
}

int api_write_json(struct evbuffer *out, json_object *msg)
{
        struct writer w = { .out = out };
        int r = write_value(&w, msg);

        return r < 0 ? r : flush(&w);
}
