#include <event2/event.h>

#include "daemon/base/heap_trim.h"
#include "test.h"

/* Without a loop (a tool, a test) an ask trims at once. */
static void test_without_loop(void)
{
        unsigned long before = heap_trim_count();

        heap_trim_soon();
        CHECK(heap_trim_count() == before + 1);
}

/* With the loop, asks in a burst are one trim, run later on the loop, not in the asker's call. */
static void test_asks_join(void)
{
        struct event_base *base = event_base_new();
        unsigned long before;

        CHECK(heap_trim_setup(base, 20000) == 0);
        before = heap_trim_count();
        for (int i = 0; i < 5; i++)
                heap_trim_soon();
        CHECK(heap_trim_count() == before);
        event_base_loop(base, EVLOOP_ONCE);
        CHECK(heap_trim_count() == before + 1);
        /* Nothing more is pending: the loop has no event left and returns at once. */
        CHECK(event_base_loop(base, EVLOOP_NONBLOCK) == 1);
        heap_trim_soon();
        event_base_loop(base, EVLOOP_ONCE);
        CHECK(heap_trim_count() == before + 2);
        heap_trim_teardown();
        event_base_free(base);
}

/* A trim now runs in the caller's call and takes the place of one asked for later. */
static void test_now_replaces_pending(void)
{
        struct event_base *base = event_base_new();
        unsigned long before;

        CHECK(heap_trim_setup(base, 20000) == 0);
        before = heap_trim_count();
        heap_trim_soon();
        heap_trim_now();
        CHECK(heap_trim_count() == before + 1);
        CHECK(event_base_loop(base, EVLOOP_NONBLOCK) == 1);
        CHECK(heap_trim_count() == before + 1);
        heap_trim_teardown();
        event_base_free(base);
}

int main(void)
{
        RUN(test_without_loop);
        RUN(test_asks_join);
        RUN(test_now_replaces_pending);
        return test_result();
}
