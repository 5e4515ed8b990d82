/* The path MTU search over made-up paths: a healthy path costs one try, a narrow hop is found
 * exactly whatever its size, a dead path reports nothing, a failing socket stops the search. */
#include <errno.h>

#include "probes/pathmtu_search.h"
#include "test.h"

struct path {
        uint32_t carries; /* the largest payload that gets through */
        unsigned sent;
        int fail_after; /* > 0: the try after this many fails with -EIO */
};

static int try_path(uint32_t size, void *userdata)
{
        struct path *p = userdata;

        p->sent++;
        if (p->fail_after && p->sent > (unsigned)p->fail_after)
                return -EIO;
        return size <= p->carries;
}

static void test_healthy(void)
{
        struct path p = { .carries = 8972 };
        struct pathmtu_search s;

        CHECK(pathmtu_search(PATHMTU_FLOOR_BYTES, 8972, try_path, &p, &s) == 0);
        CHECK(s.largest == 8972 && s.smallest_failed == 0 && s.tries == 1 && p.sent == 1);
}

static void test_narrow_hop(void)
{
        /* A 1500-byte hop in a 9000-byte path, and every other width down to the floor. */
        struct path p = { .carries = 1472 };
        struct pathmtu_search s;

        CHECK(pathmtu_search(PATHMTU_FLOOR_BYTES, 8972, try_path, &p, &s) == 0);
        CHECK(s.largest == 1472 && s.smallest_failed == 1473);
        CHECK(s.tries <= 15);
        for (uint32_t w = PATHMTU_FLOOR_BYTES; w < 8972; w += 37) {
                p = (struct path){ .carries = w };
                CHECK(pathmtu_search(PATHMTU_FLOOR_BYTES, 8972, try_path, &p, &s) == 0);
                CHECK(s.largest == w && s.smallest_failed == w + 1);
        }
}

static void test_dead_path(void)
{
        struct path p = { .carries = 0 };
        struct pathmtu_search s;

        CHECK(pathmtu_search(PATHMTU_FLOOR_BYTES, 1472, try_path, &p, &s) == 0);
        CHECK(s.largest == 0 && s.smallest_failed == PATHMTU_FLOOR_BYTES);
}

static void test_errors(void)
{
        struct path p = { .carries = 1472, .fail_after = 3 };
        struct pathmtu_search s;

        CHECK(pathmtu_search(PATHMTU_FLOOR_BYTES, 8972, try_path, &p, &s) == -EIO);
        CHECK(pathmtu_search(0, 8972, try_path, &p, &s) == -EINVAL);
        CHECK(pathmtu_search(9000, 8972, try_path, &p, &s) == -EINVAL);
        /* floor == full: one size, tried once. */
        p = (struct path){ .carries = 100 };
        CHECK(pathmtu_search(100, 100, try_path, &p, &s) == 0 && s.largest == 100 && s.tries == 1);
}

int main(void)
{
        RUN(test_healthy);
        RUN(test_narrow_hop);
        RUN(test_dead_path);
        RUN(test_errors);
        return test_result();
}
