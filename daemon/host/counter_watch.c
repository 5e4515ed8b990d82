#include "counter_watch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/macro.h"
#include "daemon/base/clock.h"

/* Looks kept per port: the window is judged from the oldest one inside it, so a period much
 * shorter than the window/LOOKS_MAX judges a shorter stretch than the window. */
#define LOOKS_MAX 64

struct look {
        uint64_t at_usec;
        uint64_t values[_PORT_COUNTER_MAX];
};

struct watched_port {
        struct port_counter_sample last; /* the newest look, annotated */
        struct look looks[LOOKS_MAX];    /* a ring, oldest at first */
        size_t first, n;
        uint64_t last_rise_usec[_PORT_COUNTER_MAX]; /* fatal counters: when they last rose */
        bool seen;                                  /* in the newest look (else it vanished) */
};

struct counter_watch {
        struct counter_thresholds thresholds;
        struct watched_port *ports;
        size_t n_ports;
        struct port_counter_list last;
};

void counter_thresholds_from_config(const struct sparkd_config *c, struct counter_thresholds *out)
{
        *out = (struct counter_thresholds){ .window_usec = c->counters_window_usec };
        for (char **name = c->counters_fatal; name && *name; name++) {
                enum port_counter counter;

                if (port_counter_from_name(*name, &counter) == 0)
                        out->fatal[counter] = true;
        }
        out->per_sec[PORT_COUNTER_SYMBOL_ERROR] = c->counters_symbol_error_per_sec;
        out->per_sec[PORT_COUNTER_LINK_ERROR_RECOVERY] = c->counters_link_error_recovery_per_min / 60;
        out->per_sec[PORT_COUNTER_ROCE_SLOW_RESTART] = c->counters_roce_slow_restart_per_sec;
        out->per_sec[PORT_COUNTER_RX_DISCARDS_PHY] = c->counters_discards_per_sec;
        out->per_sec[PORT_COUNTER_TX_DISCARDS_PHY] = c->counters_discards_per_sec;
        out->per_sec[PORT_COUNTER_RX_OUT_OF_BUFFER] = c->counters_discards_per_sec;
        out->per_sec[PORT_COUNTER_RX_PAUSE_CTRL_PHY] = c->counters_pause_frames_per_sec;
        out->per_sec[PORT_COUNTER_TX_PAUSE_CTRL_PHY] = c->counters_pause_frames_per_sec;
}

const char *counter_action(enum port_counter counter)
{
        switch (counter) {
        case PORT_COUNTER_LINK_DOWNED:
        case PORT_COUNTER_LOCAL_LINK_INTEGRITY_ERRORS:
        case PORT_COUNTER_SYMBOL_ERROR:
        case PORT_COUNTER_LINK_ERROR_RECOVERY:
        case PORT_COUNTER_RX_CRC_ERRORS:
        case PORT_COUNTER_LINK_DOWN_EVENTS_PHY:
                return "reseat the cable at both ends, then replace the cable or transceiver if it goes on";
        case PORT_COUNTER_EXCESSIVE_BUFFER_OVERRUN_ERRORS:
        case PORT_COUNTER_PORT_XMIT_DISCARDS:
        case PORT_COUNTER_PORT_RCV_ERRORS:
        case PORT_COUNTER_RX_DISCARDS_PHY:
        case PORT_COUNTER_TX_DISCARDS_PHY:
                return "check PFC and ECN on the switch port and on the node (lossless class, buffer sizes)";
        case PORT_COUNTER_RX_OUT_OF_BUFFER:
                return "the host did not post receive buffers in time: check the receiving processes' CPU "
                       "and the ring size (ethtool -g)";
        case PORT_COUNTER_RX_PAUSE_CTRL_PHY:
        case PORT_COUNTER_TX_PAUSE_CTRL_PHY:
                return "a pause storm: find the congested or stuck receiver and check PFC on the switch "
                       "port";
        default:
                return "check PFC and ECN on the switch and the peer's load; RDMA traffic is retransmitting";
        }
}

int counter_watch_new(const struct counter_thresholds *thresholds, struct counter_watch **ret)
{
        struct counter_watch *w = calloc(1, sizeof(*w));

        if (!w)
                return -ENOMEM;
        w->thresholds = *thresholds;
        *ret = w;
        return 0;
}

void counter_watch_free(struct counter_watch *w)
{
        if (!w)
                return;
        free(w->ports);
        port_counter_list_free(&w->last);
        free(w);
}

void counter_watch_set_thresholds(struct counter_watch *w, const struct counter_thresholds *thresholds)
{
        w->thresholds = *thresholds;
}

static struct watched_port *find(struct counter_watch *w, const struct port_counter_sample *s)
{
        for (size_t i = 0; i < w->n_ports; i++)
                if (port_counter_same_port(&w->ports[i].last, s))
                        return &w->ports[i];
        return NULL;
}

static struct look *look_at(struct watched_port *p, size_t k)
{
        return &p->looks[(p->first + k) % LOOKS_MAX];
}

static void add_look(struct watched_port *p, const struct port_counter_sample *s, uint64_t now)
{
        struct look *l;

        if (p->n == LOOKS_MAX) {
                p->first = (p->first + 1) % LOOKS_MAX;
                p->n--;
        }
        l = look_at(p, p->n++);
        l->at_usec = now;
        memcpy(l->values, s->values, sizeof(l->values));
}

/* A counter that fell was reset: every kept look starts from the new value. */
static void start_over(struct watched_port *p, size_t counter, uint64_t value)
{
        for (size_t k = 0; k < p->n; k++)
                look_at(p, k)->values[counter] = value;
}

/* The oldest look inside the window (the newest one when none is older). */
static const struct look *window_start(struct watched_port *p, uint64_t now, uint64_t window)
{
        for (size_t k = 0; k < p->n; k++) {
                const struct look *l = look_at(p, k);

                if (now - l->at_usec <= window)
                        return l;
        }
        return look_at(p, p->n - 1);
}

static void judge(struct counter_watch *w, struct watched_port *p, size_t c, const struct look *start,
                  uint64_t prev, uint64_t now, counter_alert_fn alert, void *userdata)
{
        const struct counter_thresholds *t = &w->thresholds;
        struct port_counter_sample *s = &p->last;
        uint64_t elapsed = now - start->at_usec;
        enum port_counter_alarm was = s->alarm[c], is = PORT_COUNTER_QUIET;

        s->window_delta[c] = (int64_t)(s->values[c] - start->values[c]);
        s->rate_per_sec[c] = elapsed ? (double)s->window_delta[c] * 1e6 / (double)elapsed : 0;
        if (t->fatal[c]) {
                if (s->values[c] > prev)
                        p->last_rise_usec[c] = now;
                if (p->last_rise_usec[c] && now - p->last_rise_usec[c] < t->window_usec)
                        is = PORT_COUNTER_FATAL;
        } else if (t->per_sec[c] > 0 && elapsed && s->rate_per_sec[c] > t->per_sec[c]) {
                is = PORT_COUNTER_DEGRADED;
        }
        s->alarm[c] = is;
        if (is != PORT_COUNTER_QUIET && was == PORT_COUNTER_QUIET && alert) {
                struct counter_alert a = {
                        .device = s->device,
                        .port = s->port,
                        .netdev = s->netdev,
                        .counter = (enum port_counter)c,
                        .alarm = is,
                        .delta = (uint64_t)s->window_delta[c],
                        .rate_per_sec = s->rate_per_sec[c],
                        .threshold_per_sec = is == PORT_COUNTER_FATAL ? 0 : t->per_sec[c],
                        .action = counter_action((enum port_counter)c),
                };

                alert(&a, userdata);
        }
}

/* Bytes since the previous look as Gb/s; 0 across a reset or without both looks. */
static void take_throughput(struct watched_port *p, const struct port_counter_sample *s, uint64_t now)
{
        static const enum port_counter bytes[] = { PORT_COUNTER_RX_BYTES, PORT_COUNTER_TX_BYTES };
        const struct look *newest = look_at(p, p->n - 1);
        uint64_t elapsed = now - newest->at_usec;

        p->last.gbps_from_usec = newest->at_usec;
        for (size_t k = 0; k < ARRAY_SIZE(bytes); k++) {
                size_t c = bytes[k];
                bool counted = s->has[c] && p->last.has[c] && s->values[c] >= newest->values[c] && elapsed;

                /* bytes * 8 / (usec / 1e6) / 1e9 */
                p->last.gbps[k] =
                        counted ? (double)(s->values[c] - newest->values[c]) * 8 / (double)elapsed / 1e3 : 0;
                if (p->last.gbps[k] > p->last.peak_gbps[k])
                        p->last.peak_gbps[k] = p->last.gbps[k];
        }
}

static void observe_port(struct counter_watch *w, struct watched_port *p,
                         const struct port_counter_sample *s, uint64_t now, counter_alert_fn alert,
                         void *userdata)
{
        struct port_counter_sample prev = p->last;
        const struct look *start;

        take_throughput(p, s, now);

        memcpy(p->last.netdev, s->netdev, sizeof(p->last.netdev));
        memcpy(p->last.values, s->values, sizeof(p->last.values));
        memcpy(p->last.has, s->has, sizeof(p->last.has));
        for (size_t c = 0; c < _PORT_COUNTER_MAX; c++)
                if (s->has[c] && (!prev.has[c] || s->values[c] < prev.values[c]))
                        start_over(p, c, s->values[c]);
        add_look(p, s, now);
        start = window_start(p, now, w->thresholds.window_usec);
        p->last.window_usec = now - start->at_usec;
        for (size_t c = 0; c < _PORT_COUNTER_MAX; c++) {
                if (!s->has[c]) {
                        p->last.window_delta[c] = -1;
                        p->last.alarm[c] = PORT_COUNTER_QUIET;
                        continue;
                }
                if (port_counter_is_traffic(c)) {
                        judge(w, p, c, start, s->values[c], now, NULL, NULL);
                        continue;
                }
                judge(w, p, c, start, prev.has[c] ? prev.values[c] : s->values[c], now, alert, userdata);
        }
}

static int add_port(struct counter_watch *w, const struct port_counter_sample *s, uint64_t now)
{
        struct watched_port *v = realloc(w->ports, (w->n_ports + 1) * sizeof(*v));
        struct watched_port *p;

        if (!v)
                return -ENOMEM;
        w->ports = v;
        p = &v[w->n_ports++];
        memset(p, 0, sizeof(*p));
        p->last = *s;
        p->seen = true;
        add_look(p, s, now);
        return 0;
}

/* Ports missing from the newest look vanished: forgotten, so that their return is a new start. */
static void forget_vanished(struct counter_watch *w)
{
        size_t kept = 0;

        for (size_t i = 0; i < w->n_ports; i++)
                if (w->ports[i].seen)
                        w->ports[kept++] = w->ports[i];
        w->n_ports = kept;
}

static int keep_last(struct counter_watch *w, const struct port_counter_list *look)
{
        struct port_counter_sample *v = NULL;

        if (look->n) {
                v = malloc(look->n * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                memcpy(v, look->v, look->n * sizeof(*v));
        }
        port_counter_list_free(&w->last);
        w->last = (struct port_counter_list){ .v = v, .n = look->n };
        counter_watch_annotate(w, &w->last);
        return 0;
}

int counter_watch_observe(struct counter_watch *w, const struct port_counter_list *look, uint64_t now_usec,
                          counter_alert_fn alert, void *userdata)
{
        for (size_t i = 0; i < w->n_ports; i++)
                w->ports[i].seen = false;
        for (size_t i = 0; i < look->n; i++) {
                const struct port_counter_sample *s = &look->v[i];
                struct watched_port *p = find(w, s);

                if (!p) {
                        if (add_port(w, s, now_usec) < 0)
                                return -ENOMEM;
                        continue; /* the first look: nothing to compare with */
                }
                p->seen = true;
                observe_port(w, p, s, now_usec, alert, userdata);
        }
        forget_vanished(w);
        return keep_last(w, look);
}

void counter_watch_annotate(const struct counter_watch *w, struct port_counter_list *list)
{
        for (size_t i = 0; i < list->n; i++) {
                struct port_counter_sample *s = &list->v[i];

                for (size_t k = 0; k < w->n_ports; k++) {
                        const struct port_counter_sample *known = &w->ports[k].last;

                        if (!port_counter_same_port(known, s))
                                continue;
                        memcpy(s->window_delta, known->window_delta, sizeof(s->window_delta));
                        memcpy(s->rate_per_sec, known->rate_per_sec, sizeof(s->rate_per_sec));
                        memcpy(s->alarm, known->alarm, sizeof(s->alarm));
                        s->window_usec = known->window_usec;
                        memcpy(s->gbps, known->gbps, sizeof(s->gbps));
                        memcpy(s->peak_gbps, known->peak_gbps, sizeof(s->peak_gbps));
                        s->gbps_from_usec = known->gbps_from_usec;
                }
        }
}

uint64_t counter_watch_now_usec(void)
{
        return clock_monotonic_usec();
}

const struct port_counter_list *counter_watch_last(const struct counter_watch *w)
{
        return &w->last;
}
