#include <errno.h>
#include <string.h>

#include "common/json_scan.h"
#include "test.h"

static char *span_text(const char *text, struct json_scan_span s, char *buf, size_t size)
{
        snprintf(buf, size, "%.*s", (int)s.len, text + s.start);
        return buf;
}

static void test_members_and_elements_by_extent(void)
{
        const char *text = " {\"version\" : 2, \"results\":[ {\"a\":\"x}]\\\"\"} ,[1,{}], -1.5e3 ,\"s\"],"
                           "\"b\\\"k\":{\"n\":null}}\n";
        struct json_scan_list top, list;
        struct json_scan_span key, value;
        const char *expected[] = { "{\"a\":\"x}]\\\"\"}", "[1,{}]", "-1.5e3", "\"s\"" };
        char buf[128];
        size_t n = 0;
        json_object *o;

        CHECK(json_scan_open(&top, text, strlen(text), 0, '{') == 0);
        CHECK(json_scan_member(&top, &key, &value) == 1);
        CHECK(json_scan_key_is(text, key, "version"));
        CHECK_STREQ(span_text(text, value, buf, sizeof(buf)), "2");
        o = json_scan_parse(text, value);
        CHECK(json_object_is_type(o, json_type_int) && json_object_get_int(o) == 2);
        json_object_put(o);
        CHECK(json_scan_member(&top, &key, &value) == 1);
        CHECK(json_scan_key_is(text, key, "results"));
        CHECK(json_scan_open(&list, text, strlen(text), value.start, '[') == 0);
        for (int r; (r = json_scan_element(&list, &value)) == 1; n++) {
                CHECK(n < 4);
                if (n < 4)
                        CHECK_STREQ(span_text(text, value, buf, sizeof(buf)), expected[n]);
                o = json_scan_parse(text, value);
                CHECK(o != NULL);
                json_object_put(o);
        }
        CHECK(n == 4);
        /* A key with an escape is not the name it would decode to. */
        CHECK(json_scan_member(&top, &key, &value) == 1);
        CHECK(!json_scan_key_is(text, key, "b\"k"));
        CHECK(json_scan_member(&top, &key, &value) == 0);
        CHECK(json_scan_at_end(text, strlen(text), top.pos));
        /* Nothing more to read once closed. */
        CHECK(json_scan_member(&top, &key, &value) == -EBADMSG);
}

static int walk(const char *text)
{
        struct json_scan_list top;
        struct json_scan_span key, value;
        int r = json_scan_open(&top, text, strlen(text), 0, '{');

        while (r == 0 && (r = json_scan_member(&top, &key, &value)) == 1)
                r = 0;
        if (r == 0 && !json_scan_at_end(text, strlen(text), top.pos))
                r = -EBADMSG;
        return r;
}

static void test_broken_structure_is_refused(void)
{
        static const char *bad[] = {
                "",
                "[]",
                "{",
                "{\"a\":1",
                "{\"a\":1,}",
                "{\"a\" 1}",
                "{\"a\":1 \"b\":2}",
                "{\"a\":[1,2}",
                "{\"a\":{\"b\":1]}",
                "{\"a\":\"not closed}",
                "{\"a\":\"tab\tin a string\"}",
                "{a:1}",
                "{\"a\":}",
                "{\"a\":1}}",
                "{\"a\":1} x",
        };
        char deep[200];

        CHECK(walk("{}") == 0);
        CHECK(walk(" {\"a\":[[{}]], \"b\":true}\t") == 0);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                int r = walk(bad[i]);

                if (r != -EBADMSG)
                        fprintf(stderr, "not refused: %s\n", bad[i]);
                CHECK(r == -EBADMSG);
        }
        /* Nesting past the scanner's depth is refused, not followed. */
        memset(deep, '[', 100);
        memset(deep + 100, ']', 99);
        deep[199] = '\0';
        {
                char doc[240];

                snprintf(doc, sizeof(doc), "{\"a\":%s]}", deep);
                CHECK(walk(doc) == -EBADMSG);
        }
}

static void test_parse_takes_exactly_one_value(void)
{
        const char *text = "{\"a\":1}{\"b\":2} 17";
        json_object *o;

        o = json_scan_parse(text, (struct json_scan_span){ 0, 7 });
        CHECK(json_object_is_type(o, json_type_object));
        json_object_put(o);
        CHECK(json_scan_parse(text, (struct json_scan_span){ 0, 14 }) == NULL);
        CHECK(json_scan_parse(text, (struct json_scan_span){ 0, 5 }) == NULL);
        o = json_scan_parse(text, (struct json_scan_span){ 15, 2 });
        CHECK(json_object_is_type(o, json_type_int) && json_object_get_int(o) == 17);
        json_object_put(o);
        /* "1" of "17" is a whole number when the span ends there. */
        o = json_scan_parse(text, (struct json_scan_span){ 15, 1 });
        CHECK(json_object_is_type(o, json_type_int) && json_object_get_int(o) == 1);
        json_object_put(o);
}

int main(void)
{
        RUN(test_members_and_elements_by_extent);
        RUN(test_broken_structure_is_refused);
        RUN(test_parse_takes_exactly_one_value);
        return test_result();
}
