#include "avahi_poll.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/time.h>

struct avahi_poll {
        AvahiPoll api; /* first, so api.userdata and the struct agree */
        struct event_base *base;
        unsigned live;
};

/*
 * Avahi frees watches and timeouts from inside their own callbacks (and from other ones). A free
 * during our own dispatch only marks the object; the dispatcher releases it after the callback
 * returns, so nothing touches freed memory.
 */
struct AvahiWatch {
        struct avahi_poll *poll;
        struct event *ev;
        int fd;
        AvahiWatchEvent wanted;
        AvahiWatchEvent fired; /* what watch_get_events() answers during the callback */
        AvahiWatchCallback callback;
        void *userdata;
        bool is_dispatching;
        bool is_freed;
};

struct AvahiTimeout {
        struct avahi_poll *poll;
        struct event *ev;
        AvahiTimeoutCallback callback;
        void *userdata;
        bool is_dispatching;
        bool is_freed;
};

static short watch_to_libevent(AvahiWatchEvent e)
{
        return (e & AVAHI_WATCH_IN ? EV_READ : 0) | (e & AVAHI_WATCH_OUT ? EV_WRITE : 0);
}

static void watch_release(AvahiWatch *w)
{
        event_free(w->ev);
        w->poll->live--;
        free(w);
}

static void watch_on_event(evutil_socket_t fd, short what, void *userdata)
{
        AvahiWatch *w = userdata;
        AvahiWatchEvent fired =
                (what & EV_READ ? AVAHI_WATCH_IN : 0) | (what & EV_WRITE ? AVAHI_WATCH_OUT : 0);
        struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT };

        /* libevent folds errors and hang-ups into read/write readiness; poll(2) semantics, which
         * Avahi's D-Bus glue expects, report them separately. */
        if (poll(&pfd, 1, 0) == 1)
                fired |= pfd.revents & (AVAHI_WATCH_ERR | AVAHI_WATCH_HUP);

        w->fired = fired;
        w->is_dispatching = true;
        w->callback(w, w->fd, fired, w->userdata);
        if (w->is_freed) {
                watch_release(w);
                return;
        }
        w->is_dispatching = false;
        w->fired = 0;
}

static int watch_arm(AvahiWatch *w, AvahiWatchEvent wanted)
{
        short what = watch_to_libevent(wanted);

        event_del(w->ev);
        w->wanted = wanted;
        if (!what)
                return 0;
        /* Not pending after event_del, so the event may be reassigned, even from its callback. */
        if (event_assign(w->ev, w->poll->base, w->fd, what | EV_PERSIST, watch_on_event, w) < 0)
                return -EINVAL;
        return event_add(w->ev, NULL) < 0 ? -ENOMEM : 0;
}

static AvahiWatch *watch_new(const AvahiPoll *api, int fd, AvahiWatchEvent wanted,
                             AvahiWatchCallback callback, void *userdata)
{
        struct avahi_poll *p = api->userdata;
        AvahiWatch *w = calloc(1, sizeof(*w));

        if (!w)
                return NULL;
        *w = (AvahiWatch){ .poll = p, .fd = fd, .callback = callback, .userdata = userdata };
        w->ev = event_new(p->base, fd, EV_READ | EV_PERSIST, watch_on_event, w);
        if (!w->ev) {
                free(w);
                return NULL;
        }
        p->live++;
        if (watch_arm(w, wanted) < 0) {
                watch_release(w);
                return NULL;
        }
        return w;
}

static void watch_update(AvahiWatch *w, AvahiWatchEvent wanted)
{
        /* The interface has no way to report a failure; event_add only fails without memory. */
        if (wanted != w->wanted)
                (void)watch_arm(w, wanted);
}

static AvahiWatchEvent watch_get_events(AvahiWatch *w)
{
        return w->fired;
}

static void watch_free(AvahiWatch *w)
{
        event_del(w->ev);
        if (w->is_dispatching)
                w->is_freed = true;
        else
                watch_release(w);
}

static void timeout_release(AvahiTimeout *t)
{
        event_free(t->ev);
        t->poll->live--;
        free(t);
}

static void timeout_on_event(evutil_socket_t fd, short what, void *userdata)
{
        AvahiTimeout *t = userdata;

        /* One-shot: libevent already dropped the timer; the callback may re-arm it. */
        t->is_dispatching = true;
        t->callback(t, t->userdata);
        if (t->is_freed) {
                timeout_release(t);
                return;
        }
        t->is_dispatching = false;
}

static void timeout_update(AvahiTimeout *t, const struct timeval *tv)
{
        struct timeval now, delay = { 0, 0 };

        event_del(t->ev);
        if (!tv)
                return;
        /* Avahi's times are absolute wall-clock times (gettimeofday); libevent's are relative.
         * A time in the past fires on the next loop iteration. The cached loop time is refreshed
         * first so that time spent in callbacks does not make the timer fire early. */
        event_base_update_cache_time(t->poll->base);
        gettimeofday(&now, NULL);
        if (timercmp(tv, &now, >))
                timersub(tv, &now, &delay);
        (void)event_add(t->ev, &delay);
}

static AvahiTimeout *timeout_new(const AvahiPoll *api, const struct timeval *tv,
                                 AvahiTimeoutCallback callback, void *userdata)
{
        struct avahi_poll *p = api->userdata;
        AvahiTimeout *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        *t = (AvahiTimeout){ .poll = p, .callback = callback, .userdata = userdata };
        t->ev = evtimer_new(p->base, timeout_on_event, t);
        if (!t->ev) {
                free(t);
                return NULL;
        }
        p->live++;
        timeout_update(t, tv);
        return t;
}

static void timeout_free(AvahiTimeout *t)
{
        event_del(t->ev);
        if (t->is_dispatching)
                t->is_freed = true;
        else
                timeout_release(t);
}

int avahi_poll_new(struct event_base *base, struct avahi_poll **ret)
{
        struct avahi_poll *p = calloc(1, sizeof(*p));

        if (!p)
                return -ENOMEM;
        p->base = base;
        p->api = (AvahiPoll){
                .userdata = p,
                .watch_new = watch_new,
                .watch_update = watch_update,
                .watch_get_events = watch_get_events,
                .watch_free = watch_free,
                .timeout_new = timeout_new,
                .timeout_update = timeout_update,
                .timeout_free = timeout_free,
        };
        *ret = p;
        return 0;
}

void avahi_poll_free(struct avahi_poll *p)
{
        free(p);
}

const AvahiPoll *avahi_poll_get(struct avahi_poll *p)
{
        return &p->api;
}

unsigned avahi_poll_live(const struct avahi_poll *p)
{
        return p->live;
}
