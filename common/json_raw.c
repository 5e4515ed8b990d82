#include "json_raw.h"

#include <errno.h>
#include <lz4.h>
#include <lz4hc.h>
#include <stdlib.h>
#include <string.h>

/* Packed texts: one LZ4 block for one text or for several. A held node's sections are packed
 * together: its peers section (ids that do not repeat) and its small ones gain nothing packed
 * alone, but the results rows name the same peers and the small sections share their keys. Each
 * text lies in the block with its NUL after it. */
struct block {
        unsigned refs; /* the values whose text lies in it */
        char *packed;
        int packed_len;
        size_t len;                                  /* unpacked, the NULs counted */
        char *text;                                  /* the unpacked copy, NULL while not unpacked */
        struct block *prev_unpacked, *next_unpacked; /* in unpacked while text is set */
};

/* The text with its length, measured once: a 32-node cluster view writes some 600 KiB of these
 * for every call. A packed one lies in a block instead, and is read from its copy. */
struct raw {
        char *text; /* its own; NULL while in a block */
        size_t len;
        struct block *block; /* NULL: not packed */
        size_t offset;       /* of the text in the block's */
};

static struct block *unpacked;
static void (*on_unpack)(void);

static void unlink_unpacked(struct block *b)
{
        if (b->prev_unpacked)
                b->prev_unpacked->next_unpacked = b->next_unpacked;
        else
                unpacked = b->next_unpacked;
        if (b->next_unpacked)
                b->next_unpacked->prev_unpacked = b->prev_unpacked;
        b->prev_unpacked = b->next_unpacked = NULL;
}

static int unpack(struct block *b)
{
        char *text = malloc(b->len);
        bool was_none = !unpacked;

        if (!text)
                return -ENOMEM;
        if (LZ4_decompress_safe(b->packed, text, b->packed_len, (int)b->len) != (int)b->len) {
                free(text);
                return -EBADMSG;
        }
        b->text = text;
        b->next_unpacked = unpacked;
        if (unpacked)
                unpacked->prev_unpacked = b;
        unpacked = b;
        if (was_none && on_unpack)
                on_unpack();
        return 0;
}

static void block_unref(struct block *b)
{
        if (!b || --b->refs > 0)
                return;
        if (b->text)
                unlink_unpacked(b);
        free(b->text);
        free(b->packed);
        free(b);
}

/* The text, unpacked when it is packed; NULL only when that fails. */
static const char *text_of(struct raw *raw)
{
        if (raw->text)
                return raw->text;
        if (!raw->block || (!raw->block->text && unpack(raw->block) < 0))
                return NULL;
        return raw->block->text + raw->offset;
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

        block_unref(raw->block);
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

        return raw && raw->block;
}

json_object *json_raw_parsed(json_object *value)
{
        const char *text = json_raw_text(value);

        /* The text was written by json-c, from objects no deeper than its reader's limit. */
        return text ? json_tokener_parse(text) : json_object_get(value);
}

/* LZ4's high-compression mode at its lowest level: a held results section of 64 rows packs an
 * eighth smaller than with the fast mode, and unpacks as fast. Its state (some 256 KiB) is
 * mapped for the call and given back after it, never on the stack. The block, or NULL when it
 * does not save a quarter; -ENOMEM. */
static int pack_block(const char *text, size_t len, struct block **ret)
{
        int bound = LZ4_compressBound((int)len), n;
        char *scratch = malloc((size_t)bound);
        void *state = malloc((size_t)LZ4_sizeofStateHC());
        struct block *b = NULL;

        *ret = NULL;
        if (!scratch || !state) {
                free(scratch);
                free(state);
                return -ENOMEM;
        }
        n = LZ4_compress_HC_extStateHC(state, text, scratch, (int)len, bound, LZ4HC_CLEVEL_MIN);
        free(state);
        /* Worth a copy to unpack at each read only when it saves a quarter. */
        if (n > 0 && (size_t)n <= len - len / 4) {
                b = calloc(1, sizeof(*b));
                if (b)
                        b->packed = malloc((size_t)n);
                if (!b || !b->packed) {
                        free(b);
                        free(scratch);
                        return -ENOMEM;
                }
                memcpy(b->packed, scratch, (size_t)n);
                b->packed_len = n;
                b->len = len;
        }
        free(scratch);
        *ret = b;
        return 0;
}

int json_raw_pack_together(json_object **values, size_t n)
{
        struct block *b = NULL;
        struct raw **raws;
        size_t total = 0, at = 0;
        char *all;
        int r = 0;

        if (n == 0)
                return 0;
        raws = calloc(n, sizeof(*raws));
        if (!raws)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                raws[i] = raw_of(values[i]);
                for (size_t j = 0; raws[i] && j < i; j++)
                        if (raws[j] == raws[i])
                                raws[i] = NULL; /* twice in values */
                if (!raws[i]) {
                        free(raws);
                        return -EINVAL;
                }
                total += raws[i]->len + 1;
        }
        if (total - n < JSON_RAW_PACK_MIN || total - n > (size_t)LZ4_MAX_INPUT_SIZE) {
                free(raws);
                return 0;
        }
        all = malloc(total);
        for (size_t i = 0; all && i < n; i++) {
                const char *text = text_of(raws[i]);

                if (!text) {
                        r = -ENOMEM;
                        break;
                }
                memcpy(all + at, text, raws[i]->len + 1);
                at += raws[i]->len + 1;
        }
        if (!all)
                r = -ENOMEM;
        if (r == 0)
                r = pack_block(all, total, &b);
        free(all);
        if (r < 0 || !b) {
                free(raws);
                return r;
        }
        at = 0;
        for (size_t i = 0; i < n; i++) {
                struct raw *raw = raws[i];

                block_unref(raw->block);
                free(raw->text);
                raw->text = NULL;
                raw->block = b;
                raw->offset = at;
                b->refs++;
                at += raw->len + 1;
        }
        free(raws);
        return 0;
}

int json_raw_pack(json_object *value)
{
        struct raw *raw = raw_of(value);

        if (!raw)
                return -EINVAL;
        if (raw->block)
                return 0;
        return json_raw_pack_together(&value, 1);
}

size_t json_raw_release_unpacked(void)
{
        size_t bytes = 0;

        while (unpacked) {
                struct block *b = unpacked;

                unlink_unpacked(b);
                bytes += b->len;
                free(b->text);
                b->text = NULL;
        }
        return bytes;
}

void json_raw_on_unpack(void (*fn)(void))
{
        on_unpack = fn;
}
