#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/host/gid_watch.h"
#include "test.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must name tests/fixtures/hosts (meson passes it)"
#endif

static struct gid_entry entry(const char *device, unsigned port, const char *netdev, const char *ipv4,
                              int index)
{
        struct gid_entry e = { .port = port, .index = index };

        strcpy(e.device, device);
        strcpy(e.netdev, netdev);
        strcpy(e.ipv4, ipv4);
        return e;
}

static size_t compare(struct gid_entry *old, size_t n_old, struct gid_entry *new, size_t n_new,
                      struct gid_change **changes)
{
        struct gid_table a = { old, n_old }, b = { new, n_new };
        size_t n = 99;

        CHECK(gid_table_compare(&a, &b, changes, &n) == 0);
        return n;
}

static void test_same_table_is_no_change(void)
{
        struct gid_entry a[] = { entry("rocep1s0f1", 1, "enp1s0f1np1", "192.168.177.11", 3),
                                 entry("roceP2p1s0f1", 1, "enP2p1s0f1np1", "", -1) };
        struct gid_entry b[] = { a[1], a[0] }; /* order does not matter */
        struct gid_change *c = NULL;

        CHECK(compare(a, 2, b, 2, &c) == 0);
        free(c);
}

static void test_index_moved(void)
{
        struct gid_entry a[] = { entry("rocep1s0f1", 1, "enp1s0f1np1", "192.168.177.11", 3) };
        struct gid_entry b[] = { entry("rocep1s0f1", 1, "enp1s0f1np1", "192.168.177.11", 5) };
        struct gid_change *c = NULL;
        char text[256];

        CHECK(compare(a, 1, b, 1, &c) == 1);
        CHECK(c[0].old.index == 3 && c[0].new.index == 5);
        gid_change_describe(&c[0], text, sizeof(text));
        CHECK_STREQ(text, "rocep1s0f1 port 1 (enp1s0f1np1): 192.168.177.11 moved from GID 3 to GID 5");
        free(c);
}

static void test_address_changed_or_gone(void)
{
        struct gid_entry a[] = { entry("mlx5_0", 1, "eth0", "10.0.0.1", 3),
                                 entry("mlx5_1", 1, "eth1", "10.0.1.1", 3) };
        struct gid_entry b[] = { entry("mlx5_0", 1, "eth0", "10.0.0.9", 3),
                                 entry("mlx5_1", 1, "eth1", "", -1) };
        struct gid_change *c = NULL;
        char text[256];

        /* The same index for another address is a change too: the peer's GID is no longer ours. */
        CHECK(compare(a, 2, b, 2, &c) == 2);
        gid_change_describe(&c[0], text, sizeof(text));
        CHECK_STREQ(text, "mlx5_0 port 1 (eth0): address 10.0.0.1 (GID 3) is now 10.0.0.9 (GID 3)");
        gid_change_describe(&c[1], text, sizeof(text));
        CHECK_STREQ(text, "mlx5_1 port 1 (eth1): address 10.0.1.1 (GID 3) is now none (no GID)");
        free(c);
}

static void test_ports_coming_and_going(void)
{
        struct gid_entry a[] = { entry("mlx5_0", 1, "eth0", "10.0.0.1", 3),
                                 entry("mlx5_2", 1, "eth2", "", -1) };
        struct gid_entry b[] = { entry("mlx5_1", 1, "eth1", "", -1),
                                 entry("mlx5_3", 1, "eth3", "10.0.3.1", 3) };
        struct gid_change *c = NULL;

        /* mlx5_0 gone with its GID and mlx5_3 new with one are changes; mlx5_1 and mlx5_2, without
         * an address either side, are not. */
        CHECK(compare(a, 2, b, 2, &c) == 2);
        CHECK_STREQ(c[0].new.device, "mlx5_3");
        CHECK(c[0].old.index == -1 && c[0].new.index == 3);
        CHECK_STREQ(c[1].old.device, "mlx5_0");
        CHECK(c[1].old.index == 3 && c[1].new.index == -1 && c[1].new.port == 1);
        free(c);
}

static const char *addresses_of_gid_index_5(const char *ifname, char *buf, size_t size, void *userdata)
{
        const char *addr = userdata;

        if (strcmp(ifname, "enp1s0f1np1") != 0 || !addr)
                return NULL;
        snprintf(buf, size, "%s", addr);
        return buf;
}

/* The table the watch reads next: its one port's GID index. */
static int watched_index = 3;

static int read_watched(void *userdata, struct gid_table *out)
{
        struct gid_entry *e = malloc(sizeof(*e));

        if (!e)
                return -ENOMEM;
        *e = entry("rocep1s0f1", 1, "enp1s0f1np1", "192.168.177.11", watched_index);
        *out = (struct gid_table){ e, 1 };
        return 0;
}

/* Stale only when an environment was served before the change: a change before any was served
 * leaves no job with an old GID index. */
static void test_env_stale_after_a_served_env(void)
{
        struct event_base *base = event_base_new();
        struct gid_watch *w = NULL;

        CHECK(base && gid_watch_new(base, read_watched, NULL, &w) == 0);
        if (!w) {
                event_base_free(base);
                return;
        }
        gid_watch_check(w);
        watched_index = 5;
        gid_watch_check(w);
        CHECK(gid_watch_changes(w) == 1);
        CHECK(!gid_watch_env_stale(w));
        gid_watch_env_served(w);
        CHECK(!gid_watch_env_stale(w));
        watched_index = 3;
        gid_watch_check(w);
        CHECK(gid_watch_changes(w) == 2);
        CHECK(gid_watch_env_stale(w));
        gid_watch_env_served(w);
        CHECK(!gid_watch_env_stale(w));
        gid_watch_free(w);
        event_base_free(base);
}

static void test_build_from_fixture(void)
{
        struct rdma_inventory inv;
        struct gid_table t;
        const struct gid_entry *e = NULL;

        CHECK(rdma_scan(FIXTURES_DIR "/gid-index-5/sys", false, &inv) == 0);
        CHECK(gid_table_build(&inv, addresses_of_gid_index_5, "192.168.177.11", &t) == 0);
        CHECK(t.n == 2);
        for (size_t i = 0; i < t.n; i++)
                if (strcmp(t.v[i].device, "rocep1s0f1") == 0)
                        e = &t.v[i];
        CHECK(e && e->index == 5 && e->port == 1);
        CHECK(e && strcmp(e->netdev, "enp1s0f1np1") == 0 && strcmp(e->ipv4, "192.168.177.11") == 0);
        gid_table_free(&t);
        /* An address the table does not hold: the port is there, its GID is not. */
        CHECK(gid_table_build(&inv, addresses_of_gid_index_5, "192.168.177.99", &t) == 0);
        for (size_t i = 0; i < t.n; i++)
                if (strcmp(t.v[i].device, "rocep1s0f1") == 0)
                        CHECK(t.v[i].index == -1);
        gid_table_free(&t);
        rdma_inventory_free(&inv);
}

int main(void)
{
        RUN(test_same_table_is_no_change);
        RUN(test_index_moved);
        RUN(test_address_changed_or_gone);
        RUN(test_ports_coming_and_going);
        RUN(test_env_stale_after_a_served_env);
        RUN(test_build_from_fixture);
        return test_result();
}
