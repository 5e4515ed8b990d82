/* A message written piece by piece into a connection's output is the same text jsonrpc_to_string
 * makes of it, and a large held text goes out from where it lies, held until written. */
#include <stdlib.h>
#include <string.h>

#include "common/json_raw.h"
#include "common/jsonrpc.h"
#include "daemon/base/api_write.h"
#include "test.h"

/* What api_write_json gives for msg, as a string (caller frees). */
static char *written(json_object *msg)
{
        struct evbuffer *out = evbuffer_new();
        size_t len;
        char *text;

        if (!out || api_write_json(out, msg) < 0) {
                evbuffer_free(out);
                return NULL;
        }
        len = evbuffer_get_length(out);
        text = malloc(len + 1);
        if (text) {
                evbuffer_remove(out, text, len);
                text[len] = '\0';
        }
        evbuffer_free(out);
        return text;
}

static void check_same(json_object *msg)
{
        char *mine = written(msg);

        CHECK_STREQ(mine, jsonrpc_to_string(msg, NULL));
        free(mine);
}

static void test_every_kind_of_value(void)
{
        json_object *o = json_object_new_object(), *a = json_object_new_array(),
                    *deep = json_object_new_object();
        char big[10000];

        memset(big, 'x', sizeof(big));
        big[0] = '"';
        big[sizeof(big) - 2] = '"';
        big[sizeof(big) - 1] = '\0';
        json_object_object_add(
                o, "s", json_object_new_string("quote \" back \\ slash / tab \t nl \n bell \a \x7f é"));
        json_object_object_add(o, "key with / and \" and \t", json_object_new_int(-7));
        json_object_object_add(o, "", json_object_new_string(""));
        json_object_object_add(o, "dotted.key-1_x", json_object_new_int64(INT64_MIN));
        json_object_object_add(o, "double", json_object_new_double(0.1));
        json_object_object_add(o, "tiny", json_object_new_double(-1e-300));
        json_object_object_add(o, "whole", json_object_new_double(3.0));
        json_object_object_add(o, "yes", json_object_new_boolean(1));
        json_object_object_add(o, "no", json_object_new_boolean(0));
        json_object_object_add(o, "none", NULL);
        json_object_object_add(o, "empty_object", json_object_new_object());
        json_object_object_add(o, "empty_array", json_object_new_array());
        json_object_array_add(a, NULL);
        json_object_array_add(a, json_object_new_uint64(UINT64_MAX));
        json_object_array_add(a, json_raw_new("{\"held\":[1,2,\"a\\/b\"]}"));
        json_object_array_add(a, json_raw_new(big));
        json_object_object_add(deep, "a", a);
        json_object_object_add(o, "deep", deep);
        check_same(o);
        json_object_put(o);
}

/* A container with a writer of its own (as the history's results) is written by that writer. */
static void test_a_container_with_its_own_writer(void)
{
        json_object *o = json_object_new_object(), *results = json_object_new_array();

        json_object_set_serializer(results, json_object_userdata_to_json_string, strdup("[{\"x\":1}]"),
                                   json_object_free_userdata);
        json_object_object_add(o, "results", results);
        check_same(o);
        json_object_put(o);
}

static char *random_string(unsigned *seed, bool is_plain)
{
        static const char plain[] = "abcXYZ019_-. ";
        size_t n = (size_t)(rand_r(seed) % 12);
        char *s = malloc(n + 1);

        for (size_t i = 0; s && i < n; i++)
                s[i] = is_plain ? plain[rand_r(seed) % (sizeof(plain) - 1)] : (char)(1 + rand_r(seed) % 255);
        if (s)
                s[n] = '\0';
        return s;
}

static json_object *random_value(unsigned *seed, int depth)
{
        int what = rand_r(seed) % (depth > 3 ? 6 : 8);
        json_object *v;
        char *s;

        switch (what) {
        case 0:
                return NULL;
        case 1:
                return json_object_new_int64((int64_t)rand_r(seed) - RAND_MAX / 2);
        case 2:
                return json_object_new_double((double)rand_r(seed) / 7.0);
        case 3:
                return json_object_new_boolean(rand_r(seed) % 2);
        case 4:
                s = random_string(seed, rand_r(seed) % 2);
                v = json_object_new_string(s);
                free(s);
                return v;
        case 5:
                return json_raw_new(rand_r(seed) % 2 ? "[1,\"x\\/y\"]" : "{}");
        case 6:
                v = json_object_new_array();
                for (int i = rand_r(seed) % 5; i > 0; i--)
                        json_object_array_add(v, random_value(seed, depth + 1));
                return v;
        default:
                v = json_object_new_object();
                for (int i = rand_r(seed) % 5; i > 0; i--) {
                        s = random_string(seed, rand_r(seed) % 3 != 0);
                        json_object_object_add(v, s, random_value(seed, depth + 1));
                        free(s);
                }
                return v;
        }
}

static void test_random_trees(void)
{
        unsigned seed = 20261127;

        for (int i = 0; i < 2000; i++) {
                json_object *o = json_object_new_object();

                json_object_object_add(o, "v", random_value(&seed, 0));
                check_same(o);
                json_object_put(o);
        }
}

/* Pieces are gathered before they go out: a message far larger than what is gathered at once,
 * with pieces of every size around it (a string larger than it, held texts copied and held texts
 * queued by reference between the small ones), keeps its order. */
static void test_many_pieces_keep_their_order(void)
{
        json_object *list = json_object_new_array(), *o = json_object_new_object();
        char *big = malloc(40 * 1024), *copied = malloc(3 * 1024), *referenced = malloc(5 * 1024);

        memset(big, 'b', 40 * 1024 - 1);
        big[40 * 1024 - 1] = '\0';
        memset(copied, '2', 3 * 1024 - 1);
        copied[3 * 1024 - 1] = '\0';
        memset(referenced, '3', 5 * 1024 - 1);
        referenced[5 * 1024 - 1] = '\0';
        for (int i = 0; i < 6000; i++) {
                switch (i % 500) {
                case 7:
                        json_object_array_add(list, json_object_new_string(big));
                        break;
                case 8:
                        json_object_array_add(list, json_raw_new(copied));
                        break;
                case 9:
                        json_object_array_add(list, json_raw_new(referenced));
                        break;
                default:
                        json_object_array_add(list, json_object_new_int(i));
                }
        }
        json_object_object_add(o, "list", list);
        check_same(o);
        json_object_put(o);
        free(big);
        free(copied);
        free(referenced);
}

/* A large held text is queued where it lies, with a reference the output lets go once written. */
static void test_a_large_held_text_is_not_copied(void)
{
        char *big = malloc(64 * 1024);
        json_object *raw, *o = json_object_new_object();
        struct evbuffer *out = evbuffer_new();
        struct evbuffer_iovec v[8];
        bool is_in_place = false;
        int n;

        memset(big, '1', 64 * 1024 - 1);
        big[64 * 1024 - 1] = '\0';
        raw = json_raw_take(big);
        json_object_object_add(o, "view", json_object_get(raw));
        CHECK(api_write_json(out, o) == 0);
        json_object_put(o);
        n = evbuffer_peek(out, -1, NULL, v, 8);
        for (int i = 0; i < n && i < 8; i++)
                if (v[i].iov_base == json_raw_text(raw) && v[i].iov_len == 64 * 1024 - 1)
                        is_in_place = true;
        CHECK(is_in_place);
        /* Held by this test and by the output: not freed by this put. */
        CHECK(json_object_put(json_object_get(raw)) == 0);
        evbuffer_free(out);
        /* The output let go: this is the last reference. */
        CHECK(json_object_put(raw) == 1);
}

/* A packed held text is unpacked into a copy that lasts only to the end of the loop's turn: it
 * goes into the output as bytes of its own, still whole once the copy is released. */
static void test_a_packed_held_text_is_copied(void)
{
        size_t size = 64 * 1024;
        char *big = malloc(size), *want = NULL, *got;
        json_object *raw, *o = json_object_new_object();
        struct evbuffer *out = evbuffer_new();
        size_t len;

        /* Rows alike enough to pack, as a results section's are. */
        for (size_t i = 0, n = 0; i + 64 < size; i += n)
                n = (size_t)snprintf(big + i, size - i, "%s{\"row\":%zu,\"verdict\":\"ok\"}", i ? "," : "[",
                                     i);
        strcat(big, "]");
        raw = json_raw_new(big);
        CHECK(json_raw_pack(raw) == 0 && json_raw_is_packed(raw));
        json_object_object_add(o, "results", raw);
        CHECK(api_write_json(out, o) == 0);
        json_object_put(o);
        json_raw_release_unpacked();
        len = evbuffer_get_length(out);
        got = malloc(len + 1);
        evbuffer_remove(out, got, len);
        got[len] = '\0';
        CHECK(asprintf(&want, "{\"results\":%s}", big) > 0);
        CHECK_STREQ(got, want);
        evbuffer_free(out);
        free(big);
        free(want);
        free(got);
}

int main(void)
{
        RUN(test_every_kind_of_value);
        RUN(test_a_container_with_its_own_writer);
        RUN(test_random_trees);
        RUN(test_many_pieces_keep_their_order);
        RUN(test_a_large_held_text_is_not_copied);
        RUN(test_a_packed_held_text_is_copied);
        return test_result();
}
