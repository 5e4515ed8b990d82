#include "port_errors.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "daemon/base/event.h"
#include "daemon/base/log.h"

struct port_errors {
        struct event_base *base;
        struct event *timer;
        struct links *links;
        struct counter_watch *watch;
        char *sysfs_root;
        uint64_t period_usec;
        uint64_t window_usec;
};

static void emit_alert(const struct counter_alert *a, void *userdata)
{
        char port[16], delta[32], rate[32], threshold[32], window[32];
        const struct port_errors *p = userdata;
        const char *name = port_counter_name(a->counter);
        struct log_field f[] = {
                { "iface", a->netdev[0] ? a->netdev : NULL },
                { "device", a->device },
                { "port", port },
                { "counter", name },
                { "delta", delta },
                { "rate", rate },
                { "threshold", a->alarm == PORT_COUNTER_DEGRADED ? threshold : NULL },
                { "severity", a->alarm == PORT_COUNTER_FATAL ? "fatal" : "degraded" },
                { "action", a->action },
        };

        snprintf(port, sizeof(port), "%u", a->port);
        snprintf(delta, sizeof(delta), "%llu", (unsigned long long)a->delta);
        snprintf(rate, sizeof(rate), "%.3g", a->rate_per_sec);
        snprintf(threshold, sizeof(threshold), "%.3g", a->threshold_per_sec);
        format_duration_sec(p->window_usec / 1000000, window, sizeof(window));
        if (a->alarm == PORT_COUNTER_FATAL)
                event_emit(EVENT_PORT_ERRORS, f, ARRAY_SIZE(f),
                           "%s port %u (%s): %s rose by %llu in the last %s, which is fatal: %s", a->device,
                           a->port, a->netdev[0] ? a->netdev : "no netdev", name,
                           (unsigned long long)a->delta, window, a->action);
        else
                event_emit(EVENT_PORT_ERRORS, f, ARRAY_SIZE(f),
                           "%s port %u (%s): %s at %s/s over the last %s, above %s/s: %s", a->device,
                           a->port, a->netdev[0] ? a->netdev : "no netdev", name, rate, window, threshold,
                           a->action);
}

static void arm(struct port_errors *p)
{
        struct timeval period = { .tv_sec = (time_t)(p->period_usec / 1000000),
                                  .tv_usec = (suseconds_t)(p->period_usec % 1000000) };

        (void)event_add(p->timer, &period);
}

/* The names of the fabric links, NULL-terminated (NULL without memory). */
static char **fabric_netdevs(struct port_errors *p)
{
        struct link_states states = { 0 };
        char **names = calloc(1, sizeof(char *));

        if (!names || links_states(p->links, &states) < 0) {
                free(names);
                return NULL;
        }
        for (size_t i = 0; i < states.n; i++)
                if (strv_push(&names, states.v[i].name) < 0)
                        break;
        free(states.v);
        return names;
}

static void look(struct port_errors *p)
{
        _cleanup_strv_ char **netdevs = fabric_netdevs(p);
        struct port_counter_list list;
        int r;

        r = port_counters_scan(p->sysfs_root, netdevs, &list);
        if (r < 0) {
                log_warning("cannot read the port counters: %s", strerror(-r));
                return;
        }
        r = counter_watch_observe(p->watch, &list, counter_watch_now_usec(), emit_alert, p);
        if (r < 0)
                log_warning("cannot keep the port counters: %s", strerror(-r));
        /* Nothing to read costs no wakeups: a port that appears comes with a link change
         * (port_errors_poke). */
        if (list.n == 0)
                event_del(p->timer);
        else if (!evtimer_pending(p->timer, NULL))
                arm(p);
        port_counter_list_free(&list);
}

static void on_timer(evutil_socket_t fd, short what, void *userdata)
{
        (void)fd;
        (void)what;
        look(userdata);
}

int port_errors_new(struct event_base *base, struct links *links, struct port_errors **ret)
{
        struct port_errors *p = calloc(1, sizeof(*p));
        struct counter_thresholds none = { 0 };

        if (!p)
                return -ENOMEM;
        p->base = base;
        p->links = links;
        p->timer = event_new(base, -1, EV_PERSIST, on_timer, p);
        if (!p->timer || counter_watch_new(&none, &p->watch) < 0) {
                port_errors_free(p);
                return -ENOMEM;
        }
        *ret = p;
        return 0;
}

void port_errors_free(struct port_errors *p)
{
        if (!p)
                return;
        if (p->timer)
                event_free(p->timer);
        counter_watch_free(p->watch);
        free(p->sysfs_root);
        free(p);
}

int port_errors_configure(struct port_errors *p, const struct sparkd_config *config)
{
        struct counter_thresholds t;
        char *root = strdup(config->sysfs_root);

        if (!root)
                return -ENOMEM;
        free(p->sysfs_root);
        p->sysfs_root = root;
        counter_thresholds_from_config(config, &t);
        counter_watch_set_thresholds(p->watch, &t);
        p->window_usec = t.window_usec;
        event_del(p->timer);
        p->period_usec = config->counters_period_usec;
        if (p->period_usec)
                look(p);
        return 0;
}

void port_errors_poke(struct port_errors *p)
{
        if (p->period_usec && !evtimer_pending(p->timer, NULL))
                look(p);
}

struct counter_watch *port_errors_watch(struct port_errors *p)
{
        return p->watch;
}
