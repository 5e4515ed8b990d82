#include <event2/event.h>
#include <stdint.h>

#include "daemon/base/recheck.h"
#include "test.h"

#define SEC 1000000ULL

static uint64_t fake_now;

static uint64_t fake_clock(void)
{
        return fake_now;
}

static unsigned runs[3];

static void count(void *userdata)
{
        runs[*(unsigned *)userdata]++;
}

static unsigned ids[3] = { 0, 1, 2 };

/* Three checks as the daemon registers them: links, sysctls, GID tables. */
static struct recheck *three(struct event_base *base)
{
        struct recheck *rc = NULL;
        unsigned id;

        fake_now = 1000 * SEC;
        runs[0] = runs[1] = runs[2] = 0;
        CHECK(recheck_new(base, &rc) == 0);
        recheck_set_clock(rc, fake_clock);
        for (unsigned i = 0; i < 3; i++) {
                CHECK(recheck_add(rc, count, &ids[i], &id) == 0);
                CHECK(id == i);
        }
        return rc;
}

static void test_nothing_due_no_timer(void)
{
        struct event_base *base = event_base_new();
        struct recheck *rc = three(base);

        CHECK(recheck_next_usec(rc) == UINT64_MAX);
        /* Nothing pending: the loop has nothing to wait for and returns at once. */
        CHECK(event_base_loop(base, EVLOOP_NONBLOCK) == 1);
        recheck_free(rc);
        event_base_free(base);
}

static void test_set_one_after_another_is_one_wakeup(void)
{
        struct event_base *base = event_base_new();
        struct recheck *rc = three(base);

        /* Configured a few milliseconds apart, as a reload does one module after another. */
        recheck_set_interval(rc, 0, 60 * SEC);
        fake_now += 3000;
        recheck_set_interval(rc, 1, 60 * SEC);
        fake_now += 4000;
        recheck_set_interval(rc, 2, 60 * SEC);
        CHECK(recheck_next_usec(rc) == 1060 * SEC);

        for (unsigned minute = 1; minute <= 10; minute++) {
                fake_now = recheck_next_usec(rc);
                recheck_run_due(rc);
        }
        CHECK(recheck_wakeups(rc) == 10);
        CHECK(runs[0] == 10 && runs[1] == 10 && runs[2] == 10);
        recheck_free(rc);
        event_base_free(base);
}

static void test_earliest_decides(void)
{
        struct event_base *base = event_base_new();
        struct recheck *rc = three(base);

        recheck_set_interval(rc, 0, 60 * SEC);
        recheck_set_interval(rc, 1, 0); /* no sysctls kept: never due */
        recheck_set_interval(rc, 2, 20 * SEC);
        CHECK(recheck_next_usec(rc) == 1020 * SEC);
        fake_now = 1020 * SEC;
        recheck_run_due(rc);
        CHECK(runs[0] == 0 && runs[1] == 0 && runs[2] == 1);
        CHECK(recheck_next_usec(rc) == 1040 * SEC);
        fake_now = 1060 * SEC - 500000; /* within the coalescing slack of the 60 s one */
        recheck_run_due(rc);
        CHECK(runs[0] == 1 && runs[1] == 0 && runs[2] == 2);
        CHECK(recheck_next_usec(rc) == 1080 * SEC - 500000);
        recheck_free(rc);
        event_base_free(base);
}

static void test_reconfigure_moves_the_timer(void)
{
        struct event_base *base = event_base_new();
        struct recheck *rc = three(base);

        recheck_set_interval(rc, 0, 60 * SEC);
        recheck_set_interval(rc, 0, 5 * SEC);
        CHECK(recheck_next_usec(rc) == 1005 * SEC);
        recheck_set_interval(rc, 0, 0);
        CHECK(recheck_next_usec(rc) == UINT64_MAX);
        recheck_free(rc);
        event_base_free(base);
}

/* The real clock and loop: a short interval fires the check through the timer. */
static void test_timer_fires_in_the_loop(void)
{
        struct event_base *base = event_base_new();
        struct recheck *rc = NULL;
        unsigned id;

        runs[0] = 0;
        CHECK(recheck_new(base, &rc) == 0);
        CHECK(recheck_add(rc, count, &ids[0], &id) == 0);
        recheck_set_interval(rc, id, 10000);
        CHECK(event_base_loop(base, EVLOOP_ONCE) == 0);
        CHECK(runs[0] == 1);
        CHECK(recheck_wakeups(rc) == 1);
        recheck_free(rc);
        event_base_free(base);
}

int main(void)
{
        RUN(test_nothing_due_no_timer);
        RUN(test_set_one_after_another_is_one_wakeup);
        RUN(test_earliest_decides);
        RUN(test_reconfigure_moves_the_timer);
        RUN(test_timer_fires_in_the_loop);
        return test_result();
}
