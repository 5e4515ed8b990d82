#include "json_raw.h"

#include <errno.h>
#include <lz4.h>
#include <lz4hc.h>
#include <stdlib.h>
#include <string.h>

/* The text with its length, measured once: a 32-node cluster view writes some 600 KiB of these
 * for every call. A packed one holds the LZ4 block instead, and its text only while unpacked. */
struct raw {
        char *text; /* NULL while packed and not unpacked */
        size_t len;
        char *packed; /* NULL: not packed */
        int packed_len;
        struct raw *prev_unpacked, *next_unpacked; /* in unpacked while text is a packed one's copy */
};

static struct raw *unpacked;
static void (*on_unpack)(void);

static void unlink_unpacked(struct raw *raw)
{
        if (raw->prev_unpacked)
                raw->prev_unpacked->next_unpacked = raw->next_unpacked;
        else
                unpacked = raw->next_unpacked;
        if (raw->next_unpacked)
                raw->next_unpacked->prev_unpacked = raw->prev_unpacked;
        raw->prev_unpacked = raw->next_unpacked = NULL;
}

static int unpack(struct raw *raw)
{
        char *text = malloc(raw->len + 1);
        bool was_none = !unpacked;

        if (!text)
                return -ENOMEM;
        if (LZ4_decompress_safe(raw->packed, text, raw->packed_len, (int)raw->len) != (int)raw->len) {
                free(text);
                return -EBADMSG;
        }
        text[raw->len] = '\0';
        raw->text = text;
        raw->next_unpacked = unpacked;
        if (unpacked)
                unpacked->prev_unpacked = raw;
        unpacked = raw;
        if (was_none && on_unpack)
                on_unpack();
        return 0;
}

/* The text, unpacked when it is packed; NULL only when that fails. */
static const char *text_of(struct raw *raw)
{
        if (!raw->text && raw->packed && unpack(raw) < 0)
                return NULL;
        return raw->text;
}

static int write_raw(json_object *jso, struct printbuf *pb, int level, int flags)
{
        struct raw *raw = json_object_get_userdata(jso);
        const char *text = text_of(raw);

        return text ? printbuf_memappend(pb, text, (int)raw->len) : -1;
}

static void free_raw(json_object *jso, void *userdata)
{
        struct raw *raw = userdata;

        if (raw->packed) {
                if (raw->text)
                        unlink_unpacked(raw);
                free(raw->packed);
        }
        free(raw->text);
        free(raw);
}

json_object *json_raw_take(char *text)
{
        /* An empty string rather than an empty object: an object has a hash table of 16 entries
         * from the start (some 800 bytes), and a cluster holds hundreds of these. */
        struct raw *raw = text ? calloc(1, sizeof(*raw)) : NULL;
        json_object *o = raw ? json_object_new_string_len("", 0) : NULL;

        if (!o) {
                free(raw);
                free(text);
                return NULL;
        }
        raw->text = text;
        raw->len = strlen(text);
        json_object_set_serializer(o, write_raw, raw, free_raw);
        return o;
}

json_object *json_raw_new(const char *text)
{
        return json_raw_take(strdup(text));
}

/* Only this module sets a string's userdata, and only with its writer. */
static struct raw *raw_of(json_object *value)
{
        if (!value || !json_object_is_type(value, json_type_string) ||
            json_object_get_string_len(value) != 0)
                return NULL;
        return json_object_get_userdata(value);
}

const char *json_raw_text_length(json_object *value, size_t *len)
{
        struct raw *raw = raw_of(value);
        const char *text = raw ? text_of(raw) : NULL;

        if (text && len)
                *len = raw->len;
        return text;
}

const char *json_raw_text(json_object *value)
{
        return json_raw_text_length(value, NULL);
}

bool json_raw_is(json_object *value)
{
        return raw_of(value) != NULL;
}

int json_raw_length(json_object *value, size_t *len)
{
        struct raw *raw = raw_of(value);

        if (!raw)
                return -EINVAL;
        *len = raw->len;
        return 0;
}

bool json_raw_is_packed(json_object *value)
{
        struct raw *raw = raw_of(value);

        return raw && raw->packed;
}

json_object *json_raw_parsed(json_object *value)
{
        const char *text = json_raw_text(value);

        /* The text was written by json-c, from objects no deeper than its reader's limit. */
        return text ? json_tokener_parse(text) : json_object_get(value);
}

int json_raw_pack(json_object *value)
{
        struct raw *raw = raw_of(value);
        char *scratch, *packed;
        void *state;
        int bound, n;

        if (!raw)
                return -EINVAL;
        if (raw->packed || raw->len < JSON_RAW_PACK_MIN || raw->len > (size_t)LZ4_MAX_INPUT_SIZE)
                return 0;
        bound = LZ4_compressBound((int)raw->len);
        scratch = malloc((size_t)bound);
        /* LZ4's high-compression mode at its lowest level: a held results section of 64 rows
         * packs an eighth smaller than with the fast mode, and unpacks as fast. Its state (some
         * 256 KiB) is mapped for the call and given back after it, never on the stack. */
        state = malloc((size_t)LZ4_sizeofStateHC());
        if (!scratch || !state) {
                free(scratch);
                free(state);
                return -ENOMEM;
        }
        n = LZ4_compress_HC_extStateHC(state, raw->text, scratch, (int)raw->len, bound, LZ4HC_CLEVEL_MIN);
        free(state);
        /* Worth a copy to unpack at each read only when it saves a quarter. */
        if (n <= 0 || (size_t)n > raw->len - raw->len / 4) {
                free(scratch);
                return 0;
        }
        packed = malloc((size_t)n);
        if (packed)
                memcpy(packed, scratch, (size_t)n);
        free(scratch);
        if (!packed)
                return -ENOMEM;
        raw->packed = packed;
        raw->packed_len = n;
        free(raw->text);
        raw->text = NULL;
        return 0;
}

size_t json_raw_release_unpacked(void)
{
        size_t bytes = 0;

        while (unpacked) {
                struct raw *raw = unpacked;

                unlink_unpacked(raw);
                bytes += raw->len + 1;
                free(raw->text);
                raw->text = NULL;
        }
        return bytes;
}

void json_raw_on_unpack(void (*fn)(void))
{
        on_unpack = fn;
}
