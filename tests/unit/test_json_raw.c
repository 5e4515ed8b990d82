/* Held texts packed with LZ4: the same text back, in replies and messages too; packed only where
 * that saves; a copy unpacked lasts until released, and the daemon's loop releases it after the
 * turn that made it. */
#include <event2/event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_raw.h"
#include "daemon/base/text_release.h"
#include "test.h"

static int unpacks_asked;

static void count_unpack(void)
{
        unpacks_asked++;
}

/* A results section as a node of 64 sends it: a row for each peer, ids that do not repeat. */
static char *results_text(unsigned seed)
{
        size_t size = 64 * 160 + 3, len = 0;
        char *text = malloc(size);

        len += (size_t)snprintf(text + len, size - len, "[");
        for (int i = 0; i < 63; i++) {
                char id[33];

                for (int k = 0; k < 32; k++)
                        id[k] = "0123456789abcdef"[rand_r(&seed) % 16];
                id[32] = '\0';
                len += (size_t)snprintf(
                        text + len, size - len,
                        "%s{\"peer_id\":\"%s\",\"peer\":\"spark-%02d\",\"kind\":\"pathmtu\","
                        "\"at\":\"2026-11-29T09:%02d:%02dZ\",\"verdict\":\"ok\",\"path_mtu\":9000}",
                        i ? "," : "", id, i, rand_r(&seed) % 60, rand_r(&seed) % 60);
        }
        snprintf(text + len, size - len, "]");
        return text;
}

static void test_a_results_section_is_packed_and_read_back(void)
{
        char *text = results_text(7);
        json_object *raw = json_raw_new(text), *o = json_object_new_object();
        size_t len = 0;

        unpacks_asked = 0;
        json_raw_on_unpack(count_unpack);
        CHECK(!json_raw_is_packed(raw));
        CHECK(json_raw_pack(raw) == 0);
        CHECK(json_raw_is_packed(raw));
        CHECK(json_raw_is(raw));
        CHECK(json_raw_length(raw, &len) == 0 && len == strlen(text));
        CHECK(unpacks_asked == 0); /* the length is known without unpacking */
        CHECK_STREQ(json_raw_text(raw), text);
        CHECK_STREQ(json_raw_text(raw), text);
        CHECK(unpacks_asked == 1); /* one copy, kept until released */
        CHECK(json_raw_release_unpacked() == strlen(text) + 1);
        CHECK(json_raw_release_unpacked() == 0);
        /* Written inside a message as it came, unpacked again for that. */
        json_object_object_add(o, "results", json_object_get(raw));
        {
                char *want = NULL;

                CHECK(asprintf(&want, "{\"results\":%s}", text) > 0);
                CHECK_STREQ(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), want);
                free(want);
        }
        CHECK(unpacks_asked == 2);
        /* Packing twice leaves it as it is. */
        CHECK(json_raw_pack(raw) == 0 && json_raw_is_packed(raw));
        json_object_put(o);
        json_object_put(raw); /* freed while its copy is kept: the release must not reach it */
        CHECK(json_raw_release_unpacked() == 0);
        json_raw_on_unpack(NULL);
        free(text);
}

/* A short text, or one LZ4 cannot shrink by a quarter, stays as it is. */
static void test_what_would_not_save_stays_plain(void)
{
        unsigned seed = 11;
        char *noise = malloc(4096 + 3);
        json_object *small = json_raw_new("{\"node\":\"spark-01\"}"), *random, *plain_string;
        size_t len = 0;

        noise[0] = '"';
        for (int i = 1; i <= 4096; i++)
                noise[i] =
                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[rand_r(&seed) % 62];
        noise[4097] = '"';
        noise[4098] = '\0';
        random = json_raw_new(noise);
        CHECK(json_raw_pack(small) == 0 && !json_raw_is_packed(small));
        CHECK(json_raw_pack(random) == 0 && !json_raw_is_packed(random));
        CHECK_STREQ(json_raw_text(random), noise);
        plain_string = json_object_new_string("not held");
        CHECK(json_raw_pack(plain_string) == -EINVAL);
        CHECK(!json_raw_is(plain_string) && json_raw_length(plain_string, &len) == -EINVAL);
        CHECK(json_raw_release_unpacked() == 0);
        json_object_put(small);
        json_object_put(random);
        json_object_put(plain_string);
        free(noise);
}

struct turn {
        json_object *raw;
        const char *want;
};

static void read_in_a_callback(evutil_socket_t fd, short what, void *userdata)
{
        struct turn *t = userdata;

        CHECK_STREQ(json_raw_text(t->raw), t->want);
}

/* With the loop's release set up, a copy made in a callback is gone once that turn is over. */
static void test_the_loop_releases_copies_after_the_turn(void)
{
        struct event_base *base = event_base_new();
        char *text = results_text(3);
        struct turn t = { .raw = json_raw_new(text), .want = text };
        struct event *ev = event_new(base, -1, 0, read_in_a_callback, &t);

        CHECK(json_raw_pack(t.raw) == 0 && json_raw_is_packed(t.raw));
        CHECK(text_release_setup(base) == 0);
        event_active(ev, EV_TIMEOUT, 1);
        CHECK(event_base_loop(base, EVLOOP_NONBLOCK) >= 0);
        CHECK(json_raw_release_unpacked() == 0); /* released by the loop already */
        CHECK_STREQ(json_raw_text(t.raw), text); /* and unpacked again when read */
        text_release_teardown();
        CHECK(json_raw_release_unpacked() == 0); /* the teardown released that one */
        event_free(ev);
        json_object_put(t.raw);
        event_base_free(base);
        free(text);
}

int main(void)
{
        RUN(test_a_results_section_is_packed_and_read_back);
        RUN(test_what_would_not_save_stays_plain);
        RUN(test_the_loop_releases_copies_after_the_turn);
        return test_result();
}
