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
        return test_result();
}
