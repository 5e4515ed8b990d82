#include "fanout.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct fanout {
        fanout_send_fn send;
        void *userdata;
        struct event *timer;
        json_object *msg;
        char (*to)[33];
        size_t n, next; /* to[next..n) are still to get msg */
};

static void send_group(struct fanout *f, size_t count)
{
        for (; count > 0 && f->next < f->n; count--, f->next++)
                (void)f->send(f->userdata, f->to[f->next], json_object_get(f->msg));
        if (f->next < f->n) {
                struct timeval gap = { 0, FANOUT_GAP_USEC };

                evtimer_add(f->timer, &gap);
                return;
        }
        fanout_cancel(f);
}

static void on_timer(evutil_socket_t fd, short what, void *userdata)
{
        send_group(userdata, FANOUT_GROUP);
}

int fanout_new(struct event_base *base, fanout_send_fn send, void *userdata, struct fanout **ret)
{
        struct fanout *f = calloc(1, sizeof(*f));

        if (!f)
                return -ENOMEM;
        f->send = send;
        f->userdata = userdata;
        f->timer = evtimer_new(base, on_timer, f);
        if (!f->timer) {
                free(f);
                return -ENOMEM;
        }
        *ret = f;
        return 0;
}

void fanout_cancel(struct fanout *f)
{
        evtimer_del(f->timer);
        json_object_put(f->msg);
        f->msg = NULL;
        free(f->to);
        f->to = NULL;
        f->n = f->next = 0;
}

void fanout_free(struct fanout *f)
{
        if (!f)
                return;
        fanout_cancel(f);
        event_free(f->timer);
        free(f);
}

int fanout_start(struct fanout *f, json_object *msg, const char (*to)[33], size_t n)
{
        char(*copy)[33] = n ? malloc(n * sizeof(*copy)) : NULL;

        if (n && !copy) {
                json_object_put(msg);
                return -ENOMEM;
        }
        fanout_cancel(f);
        if (n)
                memcpy(copy, to, n * sizeof(*copy));
        f->msg = msg;
        f->to = copy;
        f->n = n;
        send_group(f, FANOUT_GROUP);
        return 0;
}

bool fanout_is_going(const struct fanout *f)
{
        return f->msg != NULL;
}

bool fanout_is_pending(const struct fanout *f, const char *peer_id)
{
        for (size_t i = f->next; i < f->n; i++)
                if (strcmp(f->to[i], peer_id) == 0)
                        return true;
        return false;
}
