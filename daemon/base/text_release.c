#include "text_release.h"

#include <errno.h>

#include "common/json_raw.h"
#include "heap_trim.h"

/* Copies freed together past this are worth a trim: a links view unpacks every node's results. */
#define TEXT_RELEASE_TRIM_BYTES (64 * 1024)

static struct event *release_event;

static void on_release(evutil_socket_t fd, short what, void *userdata)
{
        if (json_raw_release_unpacked() >= TEXT_RELEASE_TRIM_BYTES)
                heap_trim_soon();
}

static void ask_release(void)
{
        /* Active, it runs after the callbacks already due in this turn, before the loop waits. */
        event_active(release_event, EV_TIMEOUT, 1);
}

int text_release_setup(struct event_base *base)
{
        text_release_teardown();
        release_event = event_new(base, -1, 0, on_release, NULL);
        if (!release_event)
                return -ENOMEM;
        json_raw_on_unpack(ask_release);
        return 0;
}

void text_release_teardown(void)
{
        json_raw_on_unpack(NULL);
        json_raw_release_unpacked();
        if (release_event)
                event_free(release_event);
        release_event = NULL;
}
