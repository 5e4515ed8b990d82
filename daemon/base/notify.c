#include "notify.h"

#include <errno.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "log.h"

void notify_ready(const char *status)
{
        (void)sd_notifyf(0, "READY=1\nSTATUS=%s", status);
}

void notify_reloading(void)
{
        struct timespec ts;

        /* MONOTONIC_USEC lets systemd >= 253 match this reload to its request; older ones ignore it. */
        clock_gettime(CLOCK_MONOTONIC, &ts);
        (void)sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
                         (unsigned long long)ts.tv_sec * 1000000ULL +
                                 (unsigned long long)ts.tv_nsec / 1000ULL);
}

void notify_stopping(void)
{
        (void)sd_notify(0, "STOPPING=1");
}

static void watchdog_on_timer(evutil_socket_t fd, short what, void *userdata)
{
        (void)sd_notify(0, "WATCHDOG=1");
}

int notify_watchdog_start(struct event_base *base, struct event **ret)
{
        uint64_t usec = 0;
        struct timeval period;
        struct event *ev;
        int r;

        *ret = NULL;
        r = sd_watchdog_enabled(0, &usec);
        if (r <= 0)
                return r;
        /* The ping comes from the loop itself, so a stuck loop is exactly what systemd notices. */
        period.tv_sec = (time_t)(usec / 2 / 1000000);
        period.tv_usec = (suseconds_t)(usec / 2 % 1000000);
        ev = event_new(base, -1, EV_PERSIST, watchdog_on_timer, NULL);
        if (!ev)
                return -ENOMEM;
        event_add(ev, &period);
        (void)sd_notify(0, "WATCHDOG=1");
        log_debug("watchdog: pinging systemd every %llu ms", (unsigned long long)(usec / 2000));
        *ret = ev;
        return 1;
}
