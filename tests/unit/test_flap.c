#include <errno.h>

#include "daemon/host/flap.h"
#include "test.h"

#define SEC 1000000ULL

static void test_three_in_window_is_flapping(void)
{
        struct flap_detector f;

        CHECK(flap_init(&f, 3, 60 * SEC) == 0);
        CHECK(flap_record(&f, 100 * SEC) == FLAP_QUIET);
        CHECK(flap_record(&f, 110 * SEC) == FLAP_QUIET);
        CHECK(flap_record(&f, 120 * SEC) == FLAP_STARTED);
        CHECK(f.is_flapping);
        /* Everything after is one alert, not N lines. */
        for (int i = 0; i < 10; i++)
                CHECK(flap_record(&f, (121 + (uint64_t)i) * SEC) == FLAP_SUPPRESSED);
        CHECK(f.changes_while_flapping == 13);
        CHECK(flap_stable_at(&f) == 190 * SEC);
        CHECK(!flap_check_stable(&f, 189 * SEC));
        CHECK(flap_check_stable(&f, 190 * SEC));
        CHECK(!f.is_flapping);
        CHECK(flap_stable_at(&f) == 0);
        /* Back to normal: a single change is reported again. */
        CHECK(flap_record(&f, 300 * SEC) == FLAP_QUIET);
        flap_done(&f);
}

static void test_spread_out_changes_are_not_flapping(void)
{
        struct flap_detector f;

        CHECK(flap_init(&f, 3, 60 * SEC) == 0);
        for (uint64_t t = 0; t < 20; t++)
                CHECK(flap_record(&f, t * 31 * SEC) == FLAP_QUIET);
        CHECK(!f.is_flapping);
        flap_done(&f);
}

static void test_window_edge(void)
{
        struct flap_detector f;

        CHECK(flap_init(&f, 3, 60 * SEC) == 0);
        CHECK(flap_record(&f, 0) == FLAP_QUIET);
        CHECK(flap_record(&f, 30 * SEC) == FLAP_QUIET);
        CHECK(flap_record(&f, 60 * SEC + 1) == FLAP_QUIET); /* just outside the window */
        CHECK(flap_record(&f, 61 * SEC) == FLAP_STARTED);   /* 30 s, 60 s+1 µs, 61 s */
        flap_done(&f);
}

static void test_reconfigure_keeps_recent_changes(void)
{
        struct flap_detector f;

        CHECK(flap_init(&f, 5, 60 * SEC) == 0);
        CHECK(flap_record(&f, 1 * SEC) == FLAP_QUIET);
        CHECK(flap_record(&f, 2 * SEC) == FLAP_QUIET);
        CHECK(flap_reconfigure(&f, 3, 60 * SEC) == 0);
        CHECK(flap_record(&f, 3 * SEC) == FLAP_STARTED);
        CHECK(flap_reconfigure(&f, 1, 60 * SEC) == -EINVAL);
        flap_done(&f);
}

int main(void)
{
        RUN(test_three_in_window_is_flapping);
        RUN(test_spread_out_changes_are_not_flapping);
        RUN(test_window_edge);
        RUN(test_reconfigure_keeps_recent_changes);
        return test_result();
}
