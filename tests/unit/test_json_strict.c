#include <errno.h>
#include <string.h>

#include "common/json_strict.h"
#include "test.h"

static enum json_strict_error parse(const char *text, size_t len, char *why, size_t why_size)
{
        enum json_strict_error error;
        json_object *o = NULL;
        int r = json_strict_parse(text, len, 32, &o, &error, why, why_size);

        CHECK((r == 0) == (error == JSON_STRICT_OK));
        CHECK((r == 0) == (o != NULL));
        json_object_put(o);
        return error;
}

#define PARSE(text) parse(text, sizeof(text) - 1, why, sizeof(why))

static void test_accepted(void)
{
        char why[128];

        CHECK(PARSE("{\"a\":1,\"b\":{\"a\":2},\"c\":[{\"a\":3},{\"a\":4}]}") == JSON_STRICT_OK);
        CHECK(PARSE("{\"id\":9223372036854775807,\"n\":-9223372036854775808}") == JSON_STRICT_OK);
        CHECK(PARSE("{\"id\":18446744073709551615}") == JSON_STRICT_OK);
        CHECK(PARSE("{\"f\":1e400,\"g\":-0.5}") == JSON_STRICT_OK); /* not integers */
        CHECK(PARSE("{\"s\":\"a:b{c}[d]\\\"e\",\"t\":\"\\u00e9\\u0001\"}  \n") == JSON_STRICT_OK);
        CHECK(PARSE("{\"\\u0061\":1}") == JSON_STRICT_OK);
        CHECK(PARSE("{\"n\":-0,\"z\":0,\"e\":1E+2,\"f\":0.5e-3}") == JSON_STRICT_OK);
        CHECK(PARSE("\"\xf0\x9f\x98\x80\xe2\x82\xac\xc3\xa9\"") == JSON_STRICT_OK); /* 4, 3, 2 bytes */
        CHECK(PARSE(" [true,false,null,\"\\/\\b\\f\\n\\r\\t\"] ") == JSON_STRICT_OK);
}

/* The same verdict and the same sentence whichever json-c reads the text: the integers json-c
 * 0.17 refuses as "number expected" are the project's range error, the control characters only
 * json-c 0.18 refuses are refused on every version, and syntax errors name the place. */
static void test_same_on_every_json_c(void)
{
        char why[128];
        char deep[80];

        CHECK(PARSE("{\"id\":123456789012345678901234567890}") == JSON_STRICT_RANGE);
        CHECK_STREQ(why, "the integer 123456789012345678901234567890 does not fit in 64 bits");
        CHECK(PARSE("[1,-99999999999999999999]") == JSON_STRICT_RANGE);
        CHECK_STREQ(why, "the integer -99999999999999999999 does not fit in 64 bits");
        /* Not JSON at all is said so, whatever the text holds before its end. */
        CHECK(PARSE("{\"id\":123456789012345678901234567890") == JSON_STRICT_SYNTAX);
        CHECK_STREQ(why, "the text ends where ',' or '}' was expected");
        CHECK(PARSE("{\"a\":\"x\ty\"}") == JSON_STRICT_SYNTAX);
        CHECK_STREQ(why, "control character 0x09 in a string at byte 7 (JSON escapes it)");
        CHECK(PARSE("{\"a\":01}") == JSON_STRICT_SYNTAX);
        CHECK_STREQ(why, "a number with a leading zero at byte 5");
        CHECK(PARSE("{\"a\":-}") == JSON_STRICT_SYNTAX);
        CHECK_STREQ(why, "'}' at byte 6 where a digit was expected");
        CHECK(PARSE("{\"a\":1.}") == JSON_STRICT_SYNTAX);
        CHECK(PARSE("{\"a\":.5}") == JSON_STRICT_SYNTAX);
        CHECK(PARSE("{\"a\":1e}") == JSON_STRICT_SYNTAX);
        CHECK(PARSE("{\"a\":\"\\x\"}") == JSON_STRICT_SYNTAX);
        CHECK_STREQ(why, "unknown escape at byte 6");
        CHECK(PARSE("{\"a\":\"\\u12g4\"}") == JSON_STRICT_SYNTAX);
        CHECK(PARSE("{\"a\":True}") == JSON_STRICT_SYNTAX);
        CHECK_STREQ(why, "'T' at byte 5 where a value was expected");
        CHECK(PARSE("{\"a\" 1}") == JSON_STRICT_SYNTAX);
        CHECK_STREQ(why, "'1' at byte 5 where ':' was expected");
        CHECK(PARSE("[1 2]") == JSON_STRICT_SYNTAX);
        CHECK_STREQ(why, "'2' at byte 3 where ',' or ']' was expected");
        CHECK(PARSE("{\"a\":1} x") == JSON_STRICT_SYNTAX);
        CHECK_STREQ(why, "'x' at byte 8 where the end of the text was expected");
        CHECK(PARSE("{\"a\":\"abc") == JSON_STRICT_SYNTAX);
        CHECK_STREQ(why, "the text ends inside a string that starts at byte 5");
        /* UTF-8 as RFC 3629 has it: an overlong NUL, a surrogate, past U+10FFFF, cut short. */
        CHECK(PARSE("{\"a\":\"\xc0\x80\"}") == JSON_STRICT_UTF8);
        CHECK_STREQ(why, "bytes that are not UTF-8 at byte 6");
        CHECK(PARSE("{\"a\":\"\xed\xa0\x80\"}") == JSON_STRICT_UTF8);
        CHECK(PARSE("{\"a\":\"\xf4\x90\x80\x80\"}") == JSON_STRICT_UTF8);
        CHECK(PARSE("{\"a\":\"\xe2\x82\"}") == JSON_STRICT_UTF8);
        CHECK(PARSE("{\"a\":1}\xff") == JSON_STRICT_SYNTAX);
        /* Depth as json-c counts it: a value inside 31 arrays is the deepest 32 allows. */
        memset(deep, '[', 32);
        memset(deep + 32, ']', 32);
        CHECK(parse(deep, 64, why, sizeof(why)) == JSON_STRICT_OK);
        memset(deep, '[', 33);
        memset(deep + 33, ']', 33);
        CHECK(parse(deep, 66, why, sizeof(why)) == JSON_STRICT_DEPTH);
        CHECK_STREQ(why, "nested deeper than 32 levels at byte 32");
}

static void test_refused(void)
{
        char why[128];

        CHECK(PARSE("{\"method\":\"version\",\"method\":\"reload\"}") == JSON_STRICT_DUPLICATE_KEY);
        CHECK_STREQ(why, "the key \"method\" appears twice");
        CHECK(PARSE("{\"p\":{\"x\":1,\"x\":{\"y\":2}}}") == JSON_STRICT_DUPLICATE_KEY);
        CHECK_STREQ(why, "an object names the same key twice");
        CHECK(PARSE("{\"a\":1,\"\\u0061\":2}") == JSON_STRICT_DUPLICATE_KEY);
        CHECK(PARSE("[{\"a\":1},{\"b\":2,\"b\":3}]") == JSON_STRICT_DUPLICATE_KEY);

        CHECK(PARSE("{\"mode\":\"dmabuf\\u0000x\"}") == JSON_STRICT_NUL);
        CHECK(PARSE("{\"vers\\u0000ion\":1}") == JSON_STRICT_NUL);
        CHECK(parse("{\"a\":\"x\0y\"}", 11, why, sizeof(why)) == JSON_STRICT_SYNTAX);

        CHECK(PARSE("{\"id\":123456789012345678901234567890}") == JSON_STRICT_RANGE);
        CHECK_STREQ(why, "the integer 123456789012345678901234567890 does not fit in 64 bits");
        CHECK(PARSE("{\"id\":-9223372036854775809}") == JSON_STRICT_RANGE);
        CHECK(PARSE("{\"id\":18446744073709551616}") == JSON_STRICT_RANGE);

        CHECK(PARSE("{\"id\":\"\xff\xfe\"}") == JSON_STRICT_UTF8);
        CHECK(PARSE("{\"a\":1} x") == JSON_STRICT_SYNTAX);
        CHECK(PARSE("{\"a\":1") == JSON_STRICT_SYNTAX);
        CHECK(PARSE("") == JSON_STRICT_SYNTAX);
        /* What json-c alone would take but other readers would not: quotes, comments, words. */
        CHECK(PARSE("{'a':1,'a':2}") == JSON_STRICT_SYNTAX);
        CHECK(PARSE("{\"a\":1 /* \"a\": */}") == JSON_STRICT_SYNTAX);
        CHECK(PARSE("{\"a\":NaN}") == JSON_STRICT_SYNTAX);
        CHECK(PARSE("{\"a\":1,}") == JSON_STRICT_SYNTAX);
        CHECK(PARSE("[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]") ==
              JSON_STRICT_DEPTH);
}

int main(void)
{
        RUN(test_accepted);
        RUN(test_refused);
        RUN(test_same_on_every_json_c);
        return test_result();
}
