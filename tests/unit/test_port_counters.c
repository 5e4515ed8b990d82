/*
 * The counter watch against a host tree the test writes and rewrites, as the kernel would:
 * one port (mlx5_0 port 1, netdev eth0) whose counter files change between looks.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/host/counter_watch.h"
#include "inventory/port_counters.h"
#include "test.h"

#define SEC 1000000ULL

static char root[64];

static void mkdirs(const char *fmt, ...) _printf_(1, 2);
static void mkdirs(const char *fmt, ...)
{
        char path[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(path, sizeof(path), fmt, ap);
        va_end(ap);
        for (char *slash = path + strlen(root) + 1; (slash = strchr(slash, '/')); slash++) {
                *slash = '\0';
                mkdir(path, 0755);
                *slash = '/';
        }
        mkdir(path, 0755);
}

static void set_counter(const char *dir, const char *name, uint64_t value)
{
        char path[512];
        FILE *f;

        if (strcmp(dir, "statistics") == 0)
                snprintf(path, sizeof(path), "%s/class/net/eth0/statistics/%s", root, name);
        else
                snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_0/ports/1/%s/%s", root, dir, name);
        f = fopen(path, "we");
        CHECK(f != NULL);
        if (f) {
                fprintf(f, "%llu\n", (unsigned long long)value);
                fclose(f);
        }
}

static void make_tree(void)
{
        FILE *f;
        char path[512];

        snprintf(root, sizeof(root), "/tmp/sparkd-counters-XXXXXX");
        CHECK(mkdtemp(root) != NULL);
        mkdirs("%s/class/infiniband/mlx5_0/ports/1/counters", root);
        mkdirs("%s/class/infiniband/mlx5_0/ports/1/hw_counters", root);
        mkdirs("%s/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs", root);
        mkdirs("%s/class/net/eth0/statistics", root);
        snprintf(path, sizeof(path), "%s/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", root);
        f = fopen(path, "we");
        fputs("eth0\n", f);
        fclose(f);
        set_counter("counters", "link_downed", 3);
        set_counter("counters", "symbol_error", 100);
        set_counter("counters", "link_error_recovery", 0);
        set_counter("hw_counters", "rnr_nak_retry_err", 0);
        set_counter("statistics", "rx_bytes", 1000);
        set_counter("statistics", "tx_bytes", 2000);
}

static void remove_tree(void)
{
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        CHECK(system(cmd) == 0);
}

struct alerts {
        size_t n;
        struct counter_alert last;
        char counter[64];
};

static void on_alert(const struct counter_alert *a, void *userdata)
{
        struct alerts *alerts = userdata;

        alerts->n++;
        alerts->last = *a;
        snprintf(alerts->counter, sizeof(alerts->counter), "%s", port_counter_name(a->counter));
}

/* Reads the tree and shows it to the watch at second t; returns the alerts of this look. */
static size_t look(struct counter_watch *w, uint64_t t, struct alerts *alerts)
{
        struct port_counter_list list;
        size_t before = alerts->n;

        CHECK(port_counters_scan(root, NULL, &list) == 0);
        CHECK(counter_watch_observe(w, &list, t * SEC, on_alert, alerts) == 0);
        port_counter_list_free(&list);
        return alerts->n - before;
}

static struct counter_watch *new_watch(void)
{
        struct counter_thresholds t = { .window_usec = 60 * SEC };
        struct counter_watch *w = NULL;

        t.fatal[PORT_COUNTER_LINK_DOWNED] = true;
        t.fatal[PORT_COUNTER_RNR_NAK_RETRY_ERR] = true;
        t.per_sec[PORT_COUNTER_SYMBOL_ERROR] = 10;
        t.per_sec[PORT_COUNTER_LINK_ERROR_RECOVERY] = 5.0 / 60;
        CHECK(counter_watch_new(&t, &w) == 0);
        return w;
}

static void test_read(void)
{
        struct port_counter_list list;
        const struct port_counter_sample *s;

        make_tree();
        CHECK(port_counters_scan(root, NULL, &list) == 0);
        CHECK(list.n == 1);
        s = port_counter_list_find(&list, "mlx5_0", 1);
        CHECK(s != NULL);
        if (s) {
                CHECK_STREQ(s->netdev, "eth0");
                CHECK(s->has[PORT_COUNTER_LINK_DOWNED] && s->values[PORT_COUNTER_LINK_DOWNED] == 3);
                CHECK(s->has[PORT_COUNTER_RX_BYTES] && s->values[PORT_COUNTER_RX_BYTES] == 1000);
                CHECK(!s->has[PORT_COUNTER_ROCE_SLOW_RESTART]); /* the kernel does not offer it here */
                CHECK(s->window_delta[PORT_COUNTER_LINK_DOWNED] == -1);
        }
        port_counter_list_free(&list);
        remove_tree();
        CHECK(port_counters_scan("/nonexistent", NULL, &list) == 0 && list.n == 0);
}

/* A fatal counter that rises once is one event; more rises within the window are the same
 * episode; a rise after a quiet window is a new one. */
static void test_fatal_once_per_episode(void)
{
        struct counter_watch *w = new_watch();
        struct alerts a = { 0 };

        make_tree();
        CHECK(look(w, 0, &a) == 0); /* the first look: counts since boot are no episode */
        CHECK(look(w, 10, &a) == 0);
        set_counter("counters", "link_downed", 4);
        CHECK(look(w, 20, &a) == 1);
        CHECK_STREQ(a.counter, "link_downed");
        CHECK(a.last.alarm == PORT_COUNTER_FATAL && a.last.delta == 1);
        CHECK_STREQ(a.last.netdev, "eth0");
        set_counter("counters", "link_downed", 6);
        CHECK(look(w, 30, &a) == 0);
        CHECK(look(w, 80, &a) == 0);
        CHECK(look(w, 95, &a) == 0); /* 65 s without a rise: the episode is over */
        set_counter("counters", "link_downed", 7);
        CHECK(look(w, 100, &a) == 1);
        counter_watch_free(w);
        remove_tree();
}

/* A rate above its threshold is one event per episode; below it, none. */
static void test_rate_episodes(void)
{
        struct counter_watch *w = new_watch();
        struct alerts a = { 0 };

        make_tree();
        CHECK(look(w, 0, &a) == 0);
        set_counter("counters", "symbol_error", 150); /* 5/s: below 10/s */
        CHECK(look(w, 10, &a) == 0);
        set_counter("counters", "symbol_error", 1000); /* 900 in 20 s: 45/s */
        CHECK(look(w, 20, &a) == 1);
        CHECK_STREQ(a.counter, "symbol_error");
        CHECK(a.last.alarm == PORT_COUNTER_DEGRADED && a.last.threshold_per_sec == 10);
        CHECK(a.last.rate_per_sec > 44 && a.last.rate_per_sec < 46);
        set_counter("counters", "symbol_error", 2000);
        CHECK(look(w, 30, &a) == 0);  /* still the same episode */
        CHECK(look(w, 100, &a) == 0); /* no rise for 70 s: over */
        CHECK(look(w, 110, &a) == 0);
        set_counter("counters", "symbol_error", 3000);
        CHECK(look(w, 120, &a) == 1);                      /* a new episode */
        set_counter("counters", "link_error_recovery", 3); /* 3 in 10 s: 18/min, above 5/min */
        CHECK(look(w, 130, &a) == 1);
        CHECK_STREQ(a.counter, "link_error_recovery");
        counter_watch_free(w);
        remove_tree();
}

/* A counter that falls was reset: no event, and later rises are judged from the new value. */
static void test_reset(void)
{
        struct counter_watch *w = new_watch();
        struct alerts a = { 0 };

        make_tree();
        set_counter("counters", "symbol_error", 100000);
        CHECK(look(w, 0, &a) == 0);
        set_counter("counters", "symbol_error", 5);
        set_counter("counters", "link_downed", 0);
        CHECK(look(w, 10, &a) == 0);
        CHECK(look(w, 20, &a) == 0);
        set_counter("counters", "symbol_error", 50); /* 45 in 20 s from the reset: below */
        CHECK(look(w, 30, &a) == 0);
        set_counter("counters", "link_downed", 1);
        CHECK(look(w, 40, &a) == 1);
        counter_watch_free(w);
        remove_tree();
}

/* A port whose PCI function goes away is forgotten; when it comes back it is watched again. */
static void test_vanished_port_returns(void)
{
        struct counter_watch *w = new_watch();
        struct alerts a = { 0 };
        char from[256], to[256];

        make_tree();
        CHECK(look(w, 0, &a) == 0);
        snprintf(from, sizeof(from), "%s/class/infiniband/mlx5_0", root);
        snprintf(to, sizeof(to), "%s/mlx5_0.gone", root);
        CHECK(rename(from, to) == 0);
        CHECK(look(w, 10, &a) == 0);
        CHECK(counter_watch_last(w)->n == 0);
        CHECK(rename(to, from) == 0);
        set_counter("counters", "link_downed", 9); /* counted while away: a new start, no episode */
        CHECK(look(w, 20, &a) == 0);
        CHECK(counter_watch_last(w)->n == 1);
        set_counter("counters", "link_downed", 10);
        CHECK(look(w, 30, &a) == 1);
        counter_watch_free(w);
        remove_tree();
}

/* Throughput from the byte counters between two looks, its peak kept; a fabric netdev without
 * RDMA is read for its statistics alone. */
static void test_throughput(void)
{
        struct counter_watch *w = new_watch();
        struct port_counter_list list;
        const struct port_counter_sample *s;
        char *netdevs[] = { "eth0", "veth0", NULL };
        struct alerts a = { 0 };

        make_tree();
        mkdirs("%s/class/net/veth0/statistics", root);
        CHECK(look(w, 0, &a) == 0);
        set_counter("statistics", "rx_bytes", 1000 + 25ULL * 1000 * 1000 * 1000 / 8 * 10); /* 25 Gb/s */
        set_counter("statistics", "tx_bytes", 2000 + 1000 * 1000 * 1000 / 8 * 10);         /* 1 Gb/s */
        CHECK(look(w, 10, &a) == 0);
        s = port_counter_list_find_netdev(counter_watch_last(w), "eth0");
        CHECK(s && s->gbps[0] > 24.99 && s->gbps[0] < 25.01 && s->gbps[1] > 0.99 && s->gbps[1] < 1.01);
        CHECK(look(w, 20, &a) == 0); /* no traffic: now 0, the peak stays */
        s = port_counter_list_find_netdev(counter_watch_last(w), "eth0");
        CHECK(s && s->gbps[0] == 0 && s->peak_gbps[0] > 24.99);

        CHECK(port_counters_scan(root, netdevs, &list) == 0);
        CHECK(list.n == 2); /* eth0 is mlx5_0's: not twice */
        s = port_counter_list_find_netdev(&list, "veth0");
        CHECK(s && !s->device[0] && !s->has[PORT_COUNTER_LINK_DOWNED] && !s->has[PORT_COUNTER_RX_BYTES]);
        port_counter_list_free(&list);
        counter_watch_free(w);
        remove_tree();
}

int main(void)
{
        RUN(test_read);
        RUN(test_fatal_once_per_episode);
        RUN(test_rate_episodes);
        RUN(test_reset);
        RUN(test_vanished_port_returns);
        RUN(test_throughput);
        return test_result();
}
