/* The host-interface inventory: each netdev's kind from sysfs, the default route from
 * /proc/net/route, both under a fixture host root. */
#include <errno.h>
#include <stdlib.h>

#include "inventory/hostif.h"
#include "test.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must name tests/fixtures/hosts (meson passes it)"
#endif

static void test_kinds_and_route(void)
{
        struct hostif_list l;
        const struct hostif *h;

        CHECK(hostif_scan(FIXTURES_DIR "/mgmt-fallback", &l) == 0);
        CHECK(l.n == 7);
        CHECK((h = hostif_list_find(&l, "eno1")) && h->kind == HOSTIF_PHYSICAL && h->has_default_route &&
              h->route_metric == 100);
        CHECK((h = hostif_list_find(&l, "wlan0")) && h->kind == HOSTIF_WIRELESS && h->has_default_route &&
              h->route_metric == 600);
        CHECK((h = hostif_list_find(&l, "docker0")) && h->kind == HOSTIF_BRIDGE && !h->has_default_route);
        CHECK((h = hostif_list_find(&l, "veth3f2a1c9")) && h->kind == HOSTIF_VIRTUAL);
        CHECK((h = hostif_list_find(&l, "lo")) && h->kind == HOSTIF_LOOPBACK);
        CHECK((h = hostif_list_find(&l, "enp65s0f0np0")) && h->kind == HOSTIF_PHYSICAL &&
              !h->has_default_route);
        CHECK((h = hostif_list_find(&l, "enp65s0f1np1")) && h->kind == HOSTIF_PHYSICAL);
        CHECK_STREQ(hostif_kind_to_string(HOSTIF_WIRELESS), "wireless");
        CHECK_STREQ(hostif_kind_to_string(HOSTIF_BRIDGE), "bridge");
        hostif_list_free(&l);
}

/* No proc/net/route in the tree: nothing holds the default route, the kinds still read. */
static void test_no_route_file(void)
{
        struct hostif_list l;
        const struct hostif *h;

        CHECK(hostif_scan(FIXTURES_DIR "/single-port", &l) == 0);
        CHECK(l.n == 4);
        CHECK((h = hostif_list_find(&l, "eno1")) && h->kind == HOSTIF_PHYSICAL && !h->has_default_route);
        CHECK((h = hostif_list_find(&l, "lo")) && h->kind == HOSTIF_LOOPBACK);
        hostif_list_free(&l);
}

/* Plain directories under class/net (no links): a `device` entry makes one physical; the
 * bonding_masters file is not a netdev. */
static void test_malformed(void)
{
        struct hostif_list l;
        const struct hostif *h;
        enum hostif_kind kind;

        CHECK(hostif_scan(FIXTURES_DIR "/malformed", &l) == 0);
        CHECK(hostif_list_find(&l, "bonding_masters") == NULL);
        CHECK((h = hostif_list_find(&l, "notpci")) && h->kind == HOSTIF_PHYSICAL);
        CHECK(hostif_classify(FIXTURES_DIR "/malformed/sys", "bonding_masters", &kind) == -ENOENT);
        CHECK(hostif_classify(FIXTURES_DIR "/malformed/sys", "nonexistent", &kind) == -ENOENT);
        hostif_list_free(&l);
        CHECK(hostif_scan(FIXTURES_DIR "/no-such-host", &l) == -ENOENT);
}

int main(void)
{
        RUN(test_kinds_and_route);
        RUN(test_no_route_file);
        RUN(test_malformed);
        return test_result();
}
