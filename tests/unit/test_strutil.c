#include <errno.h>

#include "common/strutil.h"
#include "test.h"

static void test_parse_uint64(void)
{
        uint64_t v = 0;

        CHECK(parse_uint64("42", 10, 0, 100, &v) == 0 && v == 42);
        CHECK(parse_uint64("0660", 8, 0, 0777, &v) == 0 && v == 0660);
        CHECK(parse_uint64("101", 10, 0, 100, &v) == -ERANGE);
        CHECK(parse_uint64("-1", 10, 0, 100, &v) == -EINVAL);
        CHECK(parse_uint64(" 1", 10, 0, 100, &v) == -EINVAL);
        CHECK(parse_uint64("1x", 10, 0, 100, &v) == -EINVAL);
        CHECK(parse_uint64("", 10, 0, 100, &v) == -EINVAL);
        CHECK(parse_uint64("99999999999999999999999", 10, 0, UINT64_MAX, &v) == -ERANGE);
        CHECK(parse_uint64("0999", 8, 0, 0777, &v) == -EINVAL);
}

static void test_parse_bool(void)
{
        bool b = false;

        CHECK(parse_bool("yes", &b) == 0 && b);
        CHECK(parse_bool("Off", &b) == 0 && !b);
        CHECK(parse_bool("maybe", &b) == -EINVAL);
}

static void test_parse_duration(void)
{
        uint64_t us = 0;

        CHECK(parse_duration_usec("30", &us) == 0 && us == 30000000ULL);
        CHECK(parse_duration_usec("500ms", &us) == 0 && us == 500000ULL);
        CHECK(parse_duration_usec("5m", &us) == 0 && us == 300000000ULL);
        CHECK(parse_duration_usec("2h", &us) == 0 && us == 7200000000ULL);
        CHECK(parse_duration_usec("5 s", &us) == -EINVAL);
        CHECK(parse_duration_usec("s", &us) == -EINVAL);
        CHECK(parse_duration_usec("99999999999999999h", &us) == -ERANGE);
}

/* The health line cut its doctor summary at 384 bytes, right after " (": "... (; `sparkc doctor`". */
static void test_shorten(void)
{
        char fits[] = "link enp1s0f0np0 went down",
             cut[] = "rail-bandwidth: 14.44 Gb/s below 80 (and more, see the rails)",
             word[] = "not sparkd (bridge) spark-switch-01", utf[] = "caf\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";

        CHECK_STREQ(str_shorten(fits, 40), "link enp1s0f0np0 went down");
        CHECK_STREQ(str_shorten(cut, 41), "rail-bandwidth: 14.44 Gb/s below 80...");
        CHECK(strlen(cut) <= 41);
        CHECK_STREQ(str_shorten(word, 16), "not sparkd...");
        CHECK_STREQ(str_shorten(utf, 9), "caf\xc3\xa9...");
}

static void test_format_duration(void)
{
        char buf[32];

        CHECK_STREQ(format_duration_sec(5, buf, sizeof(buf)), "5s");
        CHECK_STREQ(format_duration_sec(125, buf, sizeof(buf)), "2m 5s");
        CHECK_STREQ(format_duration_sec(3 * 3600 + 60, buf, sizeof(buf)), "3h 1m");
        CHECK_STREQ(format_duration_sec(2 * 86400 + 3600, buf, sizeof(buf)), "2d 1h");
}

int main(void)
{
        RUN(test_parse_uint64);
        RUN(test_parse_bool);
        RUN(test_parse_duration);
        RUN(test_format_duration);
        RUN(test_shorten);
        return test_result();
}
