#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/strutil.h"
#include "daemon/config/conf.h"
#include "daemon/host/counter_watch.h"
#include "inventory/driver_stats.h"
#include "inventory/port_counters.h"
#include "test.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must name tests/fixtures/hosts (meson passes it)"
#endif

#define MLX5_FIXTURE FIXTURES_DIR "/../driver-stats/mlx5_core.txt"
#define SEC          1000000ULL

static char *read_text(const char *path)
{
        FILE *f = fopen(path, "r");
        char *text = calloc(1, 65536);
        size_t n;

        CHECK(f != NULL && text != NULL);
        if (!f || !text) {
                free(text);
                return NULL;
        }
        n = fread(text, 1, 65535, f);
        text[n] = '\0';
        fclose(f);
        return text;
}

/* A sample of the mlx5 port enp1s0f1np1 with the fixture's statistics, each of names raised by
 * the matching rise. */
static void mlx5_sample(struct port_counter_sample *s, const char *const *names, const uint64_t *rises)
{
        char *text = read_text(MLX5_FIXTURE);
        struct driver_stats stats = { 0 };

        *s = (struct port_counter_sample){ .port = 1 };
        strcpy(s->device, "rocep1s0f1");
        strcpy(s->netdev, "enp1s0f1np1");
        CHECK(text && driver_stats_parse(text, &stats) == 0);
        for (size_t i = 0; names && names[i]; i++)
                for (size_t k = 0; k < stats.n; k++)
                        if (strcmp(stats.v[k].name, names[i]) == 0)
                                stats.v[k].value += rises[i];
        port_counters_take_driver_stats(s, &stats);
        driver_stats_free(&stats);
        free(text);
}

static void test_parse(void)
{
        char *text = read_text(MLX5_FIXTURE);
        struct driver_stats stats = { 0 };
        const struct driver_stat *d;

        CHECK(text && driver_stats_parse(text, &stats) == 0);
        CHECK(stats.n == 39);
        d = driver_stats_find(&stats, "rx_discards_phy");
        CHECK(d && d->value == 40);
        d = driver_stats_find(&stats, "rx_bytes_phy");
        CHECK(d && d->value == 51521942360010ULL);
        CHECK(driver_stats_find(&stats, "NIC statistics") == NULL);
        driver_stats_free(&stats);
        free(text);
        CHECK(driver_stats_parse("NIC statistics:\n     rx_packets 12\n", &stats) == -EINVAL);
        CHECK(driver_stats_parse("     rx_packets: twelve\n", &stats) < 0);
}

/* The table's names are mlx5's: each of the six is found and taken with its value. */
static void test_mlx5_names_taken(void)
{
        static const struct {
                enum port_counter counter;
                uint64_t value;
        } want[] = {
                { PORT_COUNTER_LINK_DOWN_EVENTS_PHY, 2 }, { PORT_COUNTER_RX_DISCARDS_PHY, 40 },
                { PORT_COUNTER_TX_DISCARDS_PHY, 0 },      { PORT_COUNTER_RX_OUT_OF_BUFFER, 12 },
                { PORT_COUNTER_RX_PAUSE_CTRL_PHY, 310 },  { PORT_COUNTER_TX_PAUSE_CTRL_PHY, 4 },
        };
        struct port_counter_sample s;

        mlx5_sample(&s, NULL, NULL);
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                CHECK(s.has[want[i].counter]);
                CHECK(s.values[want[i].counter] == want[i].value);
                CHECK_STREQ(port_counter_dir(want[i].counter), "driver");
        }
        CHECK(!s.has[PORT_COUNTER_SYMBOL_ERROR]); /* sysfs counters are not the driver's */
}

/* Natively SIOCETHTOOL answers for every netdev (lo: EOPNOTSUPP); qemu-user does not
 * implement it and answers ENOSYS, so no netdev can be told from a missing one there. */
static bool ethtool_ioctl_exists(void)
{
        struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
        struct ifreq ifr = { .ifr_data = (void *)&info };
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        bool exists;

        if (fd < 0)
                return true;
        snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
        exists = ioctl(fd, SIOCETHTOOL, &ifr) == 0 || errno != ENOSYS;
        close(fd);
        return exists;
}

static void test_no_such_netdev(void)
{
        struct driver_stats stats;

        CHECK(driver_stats_read("sparkd-none0", &stats) == -ENODEV && stats.n == 0);
        CHECK(driver_stats_read("a-name-longer-than-ifnamsiz", &stats) == -ENODEV);
}

struct alerts {
        size_t n;
        enum port_counter counter;
        enum port_counter_alarm alarm;
        uint64_t delta;
};

static void on_alert(const struct counter_alert *a, void *userdata)
{
        struct alerts *alerts = userdata;

        alerts->n++;
        alerts->counter = a->counter;
        alerts->alarm = a->alarm;
        alerts->delta = a->delta;
}

static size_t look(struct counter_watch *w, uint64_t t, const char *const *names, const uint64_t *rises,
                   struct alerts *a)
{
        struct port_counter_list list = { calloc(1, sizeof(struct port_counter_sample)), 1 };
        size_t before = a->n;

        mlx5_sample(&list.v[0], names, rises);
        CHECK(counter_watch_observe(w, &list, t * SEC, on_alert, a) == 0);
        port_counter_list_free(&list);
        return a->n - before;
}

/* Judged as the RDMA counters are, with the config's defaults: link_down_events_phy is fatal on
 * a rise; the NIC's discards and pause frames alarm past the rates configured for them. Each look
 * has the fixture's values raised by what rose since the first look. */
static void test_mlx5_judged(void)
{
        struct sparkd_config config = { .counters_window_usec = 60 * SEC,
                                        .counters_discards_per_sec = 100,
                                        .counters_pause_frames_per_sec = 1000 };
        const char *names[] = { "link_down_events_phy", "rx_discards_phy", "rx_pause_ctrl_phy", NULL };
        uint64_t rose[] = { 0, 0, 0 };
        struct counter_thresholds t;
        struct counter_watch *w = NULL;
        struct alerts a = { 0 };

        CHECK(strv_split(CONF_COUNTERS_FATAL_DEFAULT, &config.counters_fatal) == 0);
        counter_thresholds_from_config(&config, &t);
        CHECK(t.fatal[PORT_COUNTER_LINK_DOWN_EVENTS_PHY]);
        CHECK(counter_watch_new(&t, &w) == 0);

        CHECK(look(w, 0, names, rose, &a) == 0); /* counts since the driver loaded: no episode */
        rose[0] = 1;
        CHECK(look(w, 10, names, rose, &a) == 1);
        CHECK(a.counter == PORT_COUNTER_LINK_DOWN_EVENTS_PHY && a.alarm == PORT_COUNTER_FATAL &&
              a.delta == 1);
        rose[2] = 5000; /* 5000 in 20 s: 250/s, below 1000/s */
        CHECK(look(w, 20, names, rose, &a) == 0);
        rose[1] = 5000; /* 5000 in 30 s: 167/s, above 100/s */
        CHECK(look(w, 30, names, rose, &a) == 1);
        CHECK(a.counter == PORT_COUNTER_RX_DISCARDS_PHY && a.alarm == PORT_COUNTER_DEGRADED);
        rose[1] = 4000; /* fell: the driver reset it; no alarm */
        CHECK(look(w, 40, names, rose, &a) == 0);
        counter_watch_free(w);
        strv_free(config.counters_fatal);
}

int main(void)
{
        RUN(test_parse);
        RUN(test_mlx5_names_taken);
        if (ethtool_ioctl_exists())
                RUN(test_no_such_netdev);
        else
                SKIP_RUN(test_no_such_netdev, "SIOCETHTOOL is not implemented here (qemu-user lacks it)");
        RUN(test_mlx5_judged);
        return test_result();
}
