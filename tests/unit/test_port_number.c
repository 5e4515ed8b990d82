/* Port numbers from the hardware (inventory/port_number.c) as the neighbours section carries
 * them: over every host tree of tests/fixtures/hosts, the netdevs given in every order give the
 * same ports, and the ports are the PCI functions with the twins together. */
#include <dirent.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/fabric/neighbours.h"
#include "daemon/host/lldp_table.h"
#include "inventory/netif.h"
#include "inventory/port_number.h"
#include "test.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must name tests/fixtures/hosts (meson passes it)"
#endif

#define MAX_NETDEVS 8

/* The links method's entries for the tree's netdevs (the fields numbering reads). */
static size_t links_of(const struct netif_list *l, json_object **items)
{
        size_t n = 0;

        for (size_t i = 0; i < l->n && n < MAX_NETDEVS; i++) {
                json_object *o = json_object_new_object();

                json_object_object_add(o, "name", json_object_new_string(l->v[i].name));
                json_object_object_add(o, "pci",
                                       l->v[i].pci[0] ? json_object_new_string(l->v[i].pci) : NULL);
                json_object_object_add(o, "twin",
                                       l->v[i].twin[0] ? json_object_new_string(l->v[i].twin) : NULL);
                json_object_object_add(o, "dev_port", json_object_new_int(l->v[i].dev_port));
                json_object_object_add(o, "operstate", json_object_new_string("up"));
                items[n++] = o;
        }
        return n;
}

/* The rail the neighbours section gives netdev, built from items in that order. */
static void rails_of(json_object **items, size_t n, char names[][IF_NAMESIZE], int *rails)
{
        struct lldp_table absent = { .status = LLDP_ABSENT };
        json_object *links = json_object_new_array(), *section, *ports;

        for (size_t i = 0; i < n; i++)
                json_object_array_add(links, json_object_get(items[i]));
        section = neighbours_build(links, &absent, NULL);
        ports = json_object_object_get(section, "ports");
        CHECK(json_object_array_length(ports) == n);
        for (size_t k = 0; k < n; k++) {
                rails[k] = -2;
                for (size_t i = 0; i < json_object_array_length(ports); i++) {
                        json_object *p = json_object_array_get_idx(ports, i), *rail;

                        if (strcmp(json_object_get_string(json_object_object_get(p, "netdev")), names[k]) ==
                            0)
                                rails[k] = json_object_object_get_ex(p, "rail", &rail) && rail
                                                   ? json_object_get_int(rail)
                                                   : -1;
                }
        }
        json_object_put(section);
        json_object_put(links);
}

static size_t permutations_differing;
static size_t permutations_tried;

/* Heap's algorithm: every order of items[0..k), each compared with the reference rails. */
static void permute(json_object **items, size_t k, size_t n, char names[][IF_NAMESIZE], const int *want)
{
        if (k <= 1) {
                int got[MAX_NETDEVS];

                rails_of(items, n, names, got);
                permutations_tried++;
                if (memcmp(got, want, n * sizeof(int)) != 0)
                        permutations_differing++;
                return;
        }
        for (size_t i = 0; i < k; i++) {
                json_object *t;

                permute(items, k - 1, n, names, want);
                t = items[k % 2 ? 0 : i];
                items[k % 2 ? 0 : i] = items[k - 1];
                items[k - 1] = t;
        }
}

struct want_port {
        const char *tree, *netdev;
        int port;
};

/* What the hardware says: the PCI function, twins together, cards in PCI order. */
static const struct want_port wanted[] = {
        { "spark-twins", "enp1s0f0np0", 0 },
        { "spark-twins", "enP2p1s0f0np0", 0 },
        { "spark-twins", "enp1s0f1np1", 1 },
        { "spark-twins", "enP2p1s0f1np1", 1 },
        { "direct-fabric", "enp1s0f0np0", 0 },
        { "direct-fabric", "enP2p1s0f0np0", 0 },
        { "direct-fabric", "enp1s0f1np1", 1 },
        { "direct-fabric", "enP2p1s0f1np1", 1 },
        { "spark-one-port", "enp1s0f0np0", 0 },
        { "spark-one-port", "enP2p1s0f1np1", 1 },
        { "mesh-two-nics", "enP2p1s0f0np0", 0 },
        { "mesh-two-nics", "enp1s0f1np1", 1 },
        { "gid-index-5", "enp1s0f1np1", 1 },
        { "gid-index-5", "enP2p1s0f1np1", 1 },
        { "port-errors", "enp1s0f1np1", 1 },
        { "single-port", "enp65s0f0np0", 0 },
        { "single-port", "enp65s0f1np1", 1 },
        { "soft-roce", "a0", 0 },
        { "soft-roce", "a1", 1 },
};

static size_t wanted_checked;

static void check_tree(const char *tree, char *const *patterns)
{
        char root[PATH_MAX];
        struct netif_list l;
        json_object *items[MAX_NETDEVS];
        char names[MAX_NETDEVS][IF_NAMESIZE];
        int want[MAX_NETDEVS];
        size_t n;

        snprintf(root, sizeof(root), "%s/%s/sys", FIXTURES_DIR, tree);
        if (netif_scan(root, patterns, &l) < 0)
                return;
        n = links_of(&l, items);
        for (size_t i = 0; i < n; i++)
                snprintf(names[i], sizeof(names[i]), "%s", l.v[i].name);
        rails_of(items, n, names, want);
        for (size_t i = 0; i < n; i++) {
                CHECK(want[i] >= 0);
                for (size_t w = 0; !patterns && w < sizeof(wanted) / sizeof(wanted[0]); w++)
                        if (strcmp(wanted[w].tree, tree) == 0 && strcmp(wanted[w].netdev, names[i]) == 0) {
                                if (want[i] != wanted[w].port)
                                        fprintf(stderr, "%s: %s is port %d, expected %d\n", tree, names[i],
                                                want[i], wanted[w].port);
                                CHECK(want[i] == wanted[w].port);
                                wanted_checked++;
                        }
        }
        permutations_differing = 0;
        permute(items, n, n, names, want);
        if (permutations_differing)
                fprintf(stderr, "%s: %zu orders of %zu netdevs gave other ports\n", tree,
                        permutations_differing, n);
        CHECK(permutations_differing == 0);
        for (size_t i = 0; i < n; i++)
                json_object_put(items[i]);
        netif_list_free(&l);
}

/* Every tree, its RDMA netdevs and then every netdev it has (as a [fabric] interfaces "*"). */
static void test_every_fixture_host(void)
{
        char *every[] = { "*", NULL };
        DIR *d = opendir(FIXTURES_DIR);
        struct dirent *e;
        size_t trees = 0;

        CHECK(d != NULL);
        while (d && (e = readdir(d))) {
                if (e->d_name[0] == '.' || e->d_type != DT_DIR)
                        continue;
                check_tree(e->d_name, NULL);
                check_tree(e->d_name, every);
                trees++;
        }
        if (d)
                closedir(d);
        CHECK(trees >= 15);
        CHECK(wanted_checked == sizeof(wanted) / sizeof(wanted[0]));
        printf("%zu orders tried\n", permutations_tried);
        CHECK(permutations_tried > 1000);
}

/* Cards in PCI order, ports past the cards before; a function's dev_port; twins named only. */
static void test_rules(void)
{
        const struct port_number_netdev two_cards[] = {
                { .name = "ens9f1np1", .pci = "0000:81:00.1" },
                { .name = "ens3f0np0", .pci = "0000:41:00.0" },
                { .name = "ens9f0np0", .pci = "0000:81:00.0" },
                { .name = "ens3f1np1", .pci = "0000:41:00.1" },
        };
        const struct port_number_netdev one_function[] = {
                { .name = "ib1", .pci = "0000:06:00.0", .dev_port = 1 },
                { .name = "ib0", .pci = "0000:06:00.0", .dev_port = 0 },
        };
        const struct port_number_netdev named_twins[] = {
                { .name = "rxe_b", .twin = "rxe_a2" },
                { .name = "rxe_a2", .twin = "rxe_b" },
                { .name = "rxe_a1" },
        };
        int ports[4];

        port_number_assign(two_cards, 4, ports);
        CHECK(ports[0] == 3 && ports[1] == 0 && ports[2] == 2 && ports[3] == 1);
        port_number_assign(one_function, 2, ports);
        CHECK(ports[0] == 1 && ports[1] == 0);
        port_number_assign(named_twins, 3, ports);
        CHECK(ports[0] == 1 && ports[1] == 1 && ports[2] == 0);
        /* Eight cards of eight functions would reach port 63: numbered without gaps instead. */
        {
                struct port_number_netdev many[40];
                char names[40][16], pcis[40][16];
                int got[40];

                for (int i = 0; i < 40; i++) {
                        snprintf(names[i], sizeof(names[i]), "vf%02d", i);
                        snprintf(pcis[i], sizeof(pcis[i]), "0000:%02x:00.%d", 0x10 + i / 5, i % 5 + 3);
                        many[i] = (struct port_number_netdev){ .name = names[i], .pci = pcis[i] };
                }
                port_number_assign(many, 40, got);
                for (int i = 0; i < 40; i++)
                        CHECK(got[i] == i);
        }
}

int main(void)
{
        RUN(test_rules);
        RUN(test_every_fixture_host);
        return test_result();
}
