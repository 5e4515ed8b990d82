#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_get.h"
#include "heap.h"
#include "test.h"

/* A message of some 100 KiB, the size of a large summary. */
static json_object *big_message(void)
{
        json_object *msg = json_object_new_object(), *list = json_object_new_array();
        char text[101];

        memset(text, 'x', sizeof(text) - 1);
        text[sizeof(text) - 1] = '\0';
        for (int i = 0; i < 1000; i++)
                json_object_array_add(list, json_object_new_string(text));
        json_object_object_add(msg, "type", json_object_new_string("summary"));
        json_object_object_add(msg, "list", list);
        json_object_object_add(msg, "slash", json_object_new_string("a/b"));
        return msg;
}

static void test_length_keeps_no_text(void)
{
        json_object *msg = big_message();
        size_t before = heap_in_use(), len = json_plain_text_length(msg), after = heap_in_use();
        size_t written;

        CHECK(len > 100000);
        CHECK(after < before + 4096);
        /* What json-c keeps when asked for the text itself, the cost measured above avoids. */
        written = strlen(json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN));
        CHECK(written == len);
        CHECK(heap_in_use() >= after + written);
        json_object_put(msg);
}

static void test_length_of_small_values(void)
{
        json_object *o = json_object_new_object();

        CHECK(json_plain_text_length(NULL) == strlen("null"));
        CHECK(json_plain_text_length(o) == strlen("{}"));
        json_object_object_add(o, "a", json_object_new_string("x/y\n"));
        CHECK(json_plain_text_length(o) == strlen("{\"a\":\"x\\/y\\n\"}"));
        json_object_put(o);
}

/* Pretty text is the same with every json-c: 0.16 wrote an empty array as "[", a line break, the
 * indent and "]", 0.17 and later as "[]". A bracket and a line break inside a string stay. */
static void test_pretty_text_of_empty_containers(void)
{
        json_object *o =
                json_tokener_parse("{\"a\":[],\"b\":{},\"c\":[[],{\"d\":[]}],\"s\":\"[\\n]{\\n  }\"}");
        char *text = json_pretty_text(o, JSON_C_TO_STRING_SPACED);

        CHECK_STREQ(text, "{\n"
                          "  \"a\": [],\n"
                          "  \"b\": {},\n"
                          "  \"c\": [\n"
                          "    [],\n"
                          "    {\n"
                          "      \"d\": []\n"
                          "    }\n"
                          "  ],\n"
                          "  \"s\": \"[\\n]{\\n  }\"\n"
                          "}");
        free(text);
        json_object_put(o);
        o = json_object_new_array();
        text = json_pretty_text(o, JSON_C_TO_STRING_SPACED);
        CHECK_STREQ(text, "[]");
        free(text);
        json_object_put(o);
}

int main(void)
{
        RUN(test_length_keeps_no_text);
        RUN(test_length_of_small_values);
        RUN(test_pretty_text_of_empty_containers);
        return test_result();
}
