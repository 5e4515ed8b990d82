#include "heap_trim.h"

#include <errno.h>
#include <malloc.h>

static struct event *trim_timer;
static struct timeval trim_delay;
static unsigned long trims;

static void trim_now(void)
{
        malloc_trim(0);
        trims++;
}

static void on_trim(evutil_socket_t fd, short what, void *userdata)
{
        trim_now();
}

int heap_trim_setup(struct event_base *base, uint64_t delay_usec)
{
        heap_trim_teardown();
        trim_delay = (struct timeval){ .tv_sec = (time_t)(delay_usec / 1000000),
                                       .tv_usec = (suseconds_t)(delay_usec % 1000000) };
        trim_timer = evtimer_new(base, on_trim, NULL);
        return trim_timer ? 0 : -ENOMEM;
}

void heap_trim_teardown(void)
{
        if (trim_timer)
                event_free(trim_timer);
        trim_timer = NULL;
}

void heap_trim_soon(void)
{
        if (!trim_timer) {
                trim_now();
                return;
        }
        /* The first ask sets the time; later ones join it rather than push it back, so a steady
         * stream of asks still trims every HEAP_TRIM_DELAY_USEC. */
        if (!evtimer_pending(trim_timer, NULL))
                evtimer_add(trim_timer, &trim_delay);
}

void heap_trim_now(void)
{
        if (trim_timer && evtimer_pending(trim_timer, NULL))
                evtimer_del(trim_timer);
        trim_now();
}

unsigned long heap_trim_count(void)
{
        return trims;
}
