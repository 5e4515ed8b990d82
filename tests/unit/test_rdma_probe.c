/* sparkd-probe-rdma's pure part: its command line, the devices and GIDs it picks from the
 * fixture trees, the connection data, the bandwidth and latency arithmetic, the result JSON. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes/rdma_params.h"
#include "test.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must name tests/fixtures/hosts (meson passes it)"
#endif

static int parse(struct rdma_options *o, char *err, size_t size, const char *first, ...)
{
        char *argv[32] = { "sparkd-probe-rdma" };
        int argc = 1;
        va_list ap;

        va_start(ap, first);
        for (const char *a = first; a && argc < 31; a = va_arg(ap, const char *))
                argv[argc++] = (char *)a;
        va_end(ap);
        argv[argc] = NULL;
        err[0] = '\0';
        return rdma_options_parse(argc, argv, o, err, size);
}

static void test_options(void)
{
        struct rdma_options o;
        char err[256];

        CHECK(parse(&o, err, sizeof(err), "--client", "192.168.177.12", NULL) == 0);
        CHECK(!o.args.is_server && o.qps == 4 && o.size == 65536 && o.tx_depth == 128 && o.cq_mod == 100);
        CHECK(o.duration == 5 && o.iters == 0 && o.lat_iters == 1000 && o.lat_size == 2);
        CHECK(o.args.port == 18515 && o.max_rails == 2 && o.want_bandwidth && o.want_latency &&
              !o.args.has_bind);

        CHECK(parse(&o, err, sizeof(err), "-c", "10.0.0.2", "-q", "8", "-l", "1M", "-D", "0.5", "--one-way",
                    "--bandwidth", "--one-rail", "-p", "4000", NULL) == 0);
        CHECK(o.qps == 8 && o.size == 1 << 20 && o.duration == 0.5 && o.is_one_way && o.want_bandwidth &&
              !o.want_latency && o.max_rails == 1 && o.args.port == 4000);

        CHECK(parse(&o, err, sizeof(err), "--server", "--bind", "10.0.0.1", NULL) == 0);
        CHECK(o.args.is_server && o.args.port == 0 && o.args.has_bind);
        CHECK(o.gid_index == -1 && o.twins == NULL);
        CHECK(parse(&o, err, sizeof(err), "--server", "--bind", "10.0.0.1", "--gid-index", "3", "--twins",
                    "rxe_a0,rxe_a1", NULL) == 0);
        CHECK(o.gid_index == 3 && strcmp(o.twins, "rxe_a0,rxe_a1") == 0);
        CHECK(parse(&o, err, sizeof(err), "-c", "10.0.0.2", "--gid-index", "auto", NULL) == 0 &&
              o.gid_index == -1);
        CHECK(parse(&o, err, sizeof(err), "-c", "10.0.0.2", "--gid-index", "65536", NULL) == -EINVAL);
        CHECK_STREQ(err, "--gid-index '65536': expected auto or a GID index from 0 to 65535");

        CHECK(parse(&o, err, sizeof(err), "--server", NULL) == -EINVAL);
        CHECK(strstr(err, "the server needs --bind ADDR") != NULL);
        CHECK(parse(&o, err, sizeof(err), "--server", "--bind", "10.0.0.1", "--qps", "2", NULL) == -EINVAL);
        CHECK(strstr(err, "are for the client") != NULL);
        CHECK(parse(&o, err, sizeof(err), "--client", "10.0.0.2", "--qps", "17", NULL) == -EINVAL);
        CHECK_STREQ(err, "--qps wants a whole number from 1 to 16, not '17'");
        CHECK(parse(&o, err, sizeof(err), "--client", "10.0.0.2", "-t", "16", "-Q", "32", NULL) == -EINVAL);
        CHECK_STREQ(err, "--cq-mod 32 is above --tx-depth 16: no write would ever be signalled");
        CHECK(parse(&o, err, sizeof(err), "--client", "host.example", NULL) == -EINVAL);
        CHECK(strstr(err, "--client") != NULL);
        CHECK(parse(&o, err, sizeof(err), "--client", "10.0.0.2", "--size", "9M", NULL) == -EINVAL);
        CHECK(parse(&o, err, sizeof(err), "--client", "10.0.0.2", "--port", "0", NULL) == -EINVAL);
        CHECK(parse(&o, err, sizeof(err), "--client", "10.0.0.2", "--server", NULL) == -EINVAL);
        CHECK_STREQ(err, "give either --server or --client ADDR");
        CHECK(parse(&o, err, sizeof(err), "--client", "10.0.0.2", "extra", NULL) == -EINVAL);
        CHECK_STREQ(err, "unexpected argument 'extra'");
        CHECK(parse(&o, err, sizeof(err), "--help", NULL) == 0 && o.args.want_help);
}

static int scan(const char *name, struct rdma_inventory *inv)
{
        char path[512];

        snprintf(path, sizeof(path), "%s/%s/sys", FIXTURES_DIR, name);
        return rdma_scan(path, false, inv);
}

static void test_rails_spark_twins(void)
{
        struct rdma_inventory inv;
        struct rdma_rail rails[RDMA_RAILS_MAX];
        char note[256], err[256];
        size_t n = 0;

        CHECK(scan("spark-twins", &inv) == 0);
        CHECK(rdma_rails_choose(&inv, "192.168.177.11", -1, 2, rails, &n, note, sizeof(note), err,
                                sizeof(err)) == 0);
        CHECK(n == 2);
        CHECK_STREQ(note, "");
        CHECK_STREQ(rails[0].device, "rocep1s0f1");
        CHECK_STREQ(rails[0].netdev, "enp1s0f1np1");
        CHECK(rails[0].gid_index == 3 && !rails[0].is_ipv6);
        CHECK_STREQ(rails[0].address, "192.168.177.11");
        /* The twin has no IPv4 address: it is reached by its RoCE v2 link-local GID. */
        CHECK_STREQ(rails[1].device, "roceP2p1s0f1");
        CHECK(rails[1].gid_index == 1 && rails[1].is_ipv6);
        CHECK_STREQ(rails[1].address, "fe80::e42:a1ff:feb1:7713%enP2p1s0f1np1");
        CHECK(rails[0].speed_mbps == 200000);

        CHECK(rdma_rails_choose(&inv, "192.168.177.11", -1, 1, rails, &n, note, sizeof(note), err,
                                sizeof(err)) == 0);
        CHECK(n == 1);

        CHECK(rdma_rails_choose(&inv, "10.0.0.1", -1, 2, rails, &n, note, sizeof(note), err, sizeof(err)) ==
              -ENODEV);
        CHECK(strncmp(err, "no RDMA device: no RoCE v2 GID of this node's RDMA devices holds 10.0.0.1",
                      72) == 0);
        CHECK(strstr(err, "; the fabric would fall back to TCP") != NULL);
        rdma_inventory_free(&inv);
}

static void test_rails_gid_index_5(void)
{
        struct rdma_inventory inv;
        struct rdma_rail rails[RDMA_RAILS_MAX];
        char note[256], err[256];
        size_t n = 0;

        /* Never a fixed index: the IPv4-mapped RoCE v2 GID is where the table has it. */
        CHECK(scan("gid-index-5", &inv) == 0);
        CHECK(rdma_rails_choose(&inv, "192.168.177.11", -1, 2, rails, &n, note, sizeof(note), err,
                                sizeof(err)) == 0);
        CHECK(n == 2 && rails[0].gid_index == 5);
        CHECK(rails[1].is_ipv6 && rails[1].gid_index == 1);
        rdma_inventory_free(&inv);
}

static void test_rails_by_address(void)
{
        struct rdma_inventory inv;
        struct rdma_rail rails[RDMA_RAILS_MAX];
        struct rdma_port *twin;
        char note[256], err[256];
        size_t n = 0;

        /* A VLAN's address first in the table (GID 3): the netdev's own address is at 5. */
        CHECK(scan("gid-vlan", &inv) == 0);
        CHECK(rdma_rails_choose(&inv, "192.168.100.1", -1, 1, rails, &n, note, sizeof(note), err,
                                sizeof(err)) == 0);
        CHECK(n == 1 && rails[0].gid_index == 5);
        CHECK_STREQ(rails[0].address, "192.168.100.1");
        rdma_inventory_free(&inv);

        /* The twin's table with a VLAN entry before its own address: its own one is chosen. */
        CHECK(scan("spark-twins", &inv) == 0);
        twin = (struct rdma_port *)&rdma_find_device(&inv, "roceP2p1s0f1")->ports[0];
        twin->gids = realloc(twin->gids, (twin->n_gids + 2) * sizeof(*twin->gids));
        CHECK(twin->gids != NULL);
        twin->gids[twin->n_gids++] = (struct rdma_gid){ .index = 3,
                                                        .gid = "0000:0000:0000:0000:0000:ffff:0a64:0002",
                                                        .type = RDMA_GID_ROCE_V2,
                                                        .netdev = "vlan100",
                                                        .ipv4 = "10.100.0.2" };
        twin->gids[twin->n_gids++] = (struct rdma_gid){ .index = 5,
                                                        .gid = "0000:0000:0000:0000:0000:ffff:c0a8:b10d",
                                                        .type = RDMA_GID_ROCE_V2,
                                                        .netdev = "enP2p1s0f1np1",
                                                        .ipv4 = "192.168.177.13" };
        CHECK(rdma_rails_choose(&inv, "192.168.177.11", -1, 2, rails, &n, note, sizeof(note), err,
                                sizeof(err)) == 0);
        CHECK(n == 2 && rails[1].gid_index == 5 && !rails[1].is_ipv6);
        CHECK_STREQ(rails[1].address, "192.168.177.13");
        rdma_inventory_free(&inv);
}

static void test_rails_unusable(void)
{
        struct rdma_inventory inv = { 0 };
        struct rdma_rail rails[RDMA_RAILS_MAX];
        char note[256], err[256];
        size_t n = 0;

        CHECK(rdma_rails_choose(&inv, "10.0.0.1", -1, 2, rails, &n, note, sizeof(note), err, sizeof(err)) ==
              -ENODEV);
        CHECK_STREQ(err, "no RDMA device: this node has none (/sys/class/infiniband lists no device); the "
                         "fabric would fall back to TCP");

        CHECK(scan("gid-missing", &inv) == 0);
        CHECK(rdma_rails_choose(&inv, "192.168.177.11", -1, 2, rails, &n, note, sizeof(note), err,
                                sizeof(err)) == -ENODEV);
        CHECK(strstr(err, "no RoCE v2 GID") != NULL);
        rdma_inventory_free(&inv);

        /* Seed 002's boot service forced the twin down: the probe runs on one device, says so. */
        CHECK(scan("spark-one-port", &inv) == 0);
        CHECK(rdma_rails_choose(&inv, "192.168.100.1", -1, 2, rails, &n, note, sizeof(note), err,
                                sizeof(err)) == 0);
        CHECK(n == 1);
        CHECK_STREQ(rails[0].device, "roceP2p1s0f0");
        CHECK_STREQ(note, "twin rocep1s0f0 left out: its port is DOWN");
        rdma_inventory_free(&inv);
}

static void test_rails_named_gid_index(void)
{
        struct rdma_inventory inv;
        struct rdma_rail rails[RDMA_RAILS_MAX];
        char note[256], err[256];
        size_t n = 0;

        /* rxe: fe80 at 0, the IPv4-mapped address at 1, both RoCE v2. */
        CHECK(scan("soft-roce", &inv) == 0);
        CHECK(rdma_rails_choose(&inv, "10.0.0.1", 1, 1, rails, &n, note, sizeof(note), err, sizeof(err)) ==
              0);
        CHECK(n == 1 && rails[0].gid_index == 1);
        CHECK(rdma_rails_choose(&inv, "10.0.0.1", 0, 1, rails, &n, note, sizeof(note), err, sizeof(err)) ==
              -EINVAL);
        CHECK_STREQ(err,
                    "GID index 0 of rxe_a0 port 1 is fe80:0000:0000:0000:1c7d:7dff:feb1:02b7 (RoCE v2), "
                    "not the RoCE v2 GID of 10.0.0.1; expected 1, the index that GID has");
        CHECK(rdma_rails_choose(&inv, "10.0.0.1", 7, 1, rails, &n, note, sizeof(note), err, sizeof(err)) ==
              -EINVAL);
        CHECK_STREQ(err,
                    "GID index 7: rxe_a0 port 1 has no GID at that index; expected the index of the RoCE "
                    "v2 GID of 10.0.0.1, which is 1");
        rdma_inventory_free(&inv);
}

static void test_twins_named(void)
{
        struct rdma_inventory inv;
        struct rdma_rail rails[RDMA_RAILS_MAX];
        char note[256], err[256];
        size_t n = 0;

        /* Soft-RoCE has no PCI parent: nothing pairs rxe_a0 and rxe_a1 unless they are named. */
        CHECK(scan("soft-roce", &inv) == 0);
        CHECK_STREQ(rdma_find_device(&inv, "rxe_a0")->twin, "");
        CHECK(rdma_twins_apply(&inv, "rxe_a0,rxe_a1", err, sizeof(err)) == 0);
        CHECK_STREQ(rdma_find_device(&inv, "rxe_a0")->twin, "rxe_a1");
        CHECK_STREQ(rdma_find_device(&inv, "rxe_a1")->twin, "rxe_a0");
        CHECK(rdma_rails_choose(&inv, "10.0.0.1", -1, 2, rails, &n, note, sizeof(note), err, sizeof(err)) ==
              0);
        CHECK(n == 1);
        CHECK_STREQ(note, "twin rxe_a1 left out: its port is DOWN");

        CHECK(rdma_twins_apply(&inv, "rxe_a0", err, sizeof(err)) == -EINVAL);
        CHECK_STREQ(err,
                    "--twins 'rxe_a0': expected two RDMA devices separated by a comma (DEV,DEV), such as "
                    "rocep1s0f1,roceP2p1s0f1");
        CHECK(rdma_twins_apply(&inv, "rxe_a0,rxe_a1,rxe_a2", err, sizeof(err)) == -EINVAL);
        CHECK(rdma_twins_apply(&inv, "rxe_a0,", err, sizeof(err)) == -EINVAL);
        CHECK(rdma_twins_apply(&inv, "rxe_a1,rxe_a1", err, sizeof(err)) == -EINVAL);
        CHECK_STREQ(err, "--twins 'rxe_a1,rxe_a1' names rxe_a1 twice: expected two different RDMA devices");
        CHECK(rdma_twins_apply(&inv, "rxe_a0,rxe_b0", err, sizeof(err)) == -ENODEV);
        CHECK_STREQ(err, "--twins 'rxe_a0,rxe_b0' names rxe_b0, which this node does not have (its RDMA "
                         "devices: rxe_a0, rxe_a1)");
        rdma_inventory_free(&inv);

        /* Named twins replace the pairing by PCI address, on both sides of the old pairs. */
        CHECK(scan("spark-twins", &inv) == 0);
        CHECK_STREQ(rdma_find_device(&inv, "rocep1s0f1")->twin, "roceP2p1s0f1");
        CHECK(rdma_twins_apply(&inv, "rocep1s0f1,rocep1s0f0", err, sizeof(err)) == 0);
        CHECK_STREQ(rdma_find_device(&inv, "rocep1s0f1")->twin, "rocep1s0f0");
        CHECK_STREQ(rdma_find_device(&inv, "roceP2p1s0f1")->twin, "");
        CHECK_STREQ(rdma_find_device(&inv, "roceP2p1s0f0")->twin, "");
        rdma_inventory_free(&inv);
}

static void test_conn_data(void)
{
        const char *token = "0123456789abcdef0123456789abcdef";
        struct rdma_conn_data d, got;
        char why[96];

        rdma_conn_data_pack(&d, token, 1, 3, 0x1122334455667788ULL, 0xabcd, 65536);
        CHECK(rdma_conn_data_check(&d, sizeof(d), token, &got, why, sizeof(why)) == 0);
        CHECK(got.rail == 1 && got.qp == 3 && got.addr == 0x1122334455667788ULL && got.rkey == 0xabcd &&
              got.size == 65536);
        CHECK(rdma_conn_data_check(&d, sizeof(d), NULL, &got, why, sizeof(why)) == 0);
        CHECK(rdma_conn_data_check(&d, sizeof(d), "fedcba9876543210fedcba9876543210", &got, why,
                                   sizeof(why)) == -EACCES);
        CHECK_STREQ(why, "wrong token");
        rdma_conn_data_pack(&d, NULL, 0, 0, 1, 2, 4096);
        CHECK(rdma_conn_data_check(&d, sizeof(d), token, &got, why, sizeof(why)) == -EACCES);
        CHECK(rdma_conn_data_check(&d, 10, token, &got, why, sizeof(why)) == -EPROTO);
        CHECK(rdma_conn_data_check(NULL, 0, NULL, &got, why, sizeof(why)) == -EPROTO);
        rdma_conn_data_pack(&d, token, 2, 0, 1, 2, 4096);
        CHECK(rdma_conn_data_check(&d, sizeof(d), token, &got, why, sizeof(why)) == -EPROTO);
        rdma_conn_data_pack(&d, token, 0, 0, 1, 2, 0);
        CHECK(rdma_conn_data_check(&d, sizeof(d), token, &got, why, sizeof(why)) == -EPROTO);
}

static void test_arithmetic(void)
{
        double rtt[10] = { 3.0, 2.9, 3.1, 2.94, 3.2, 2.96, 50, 40, 3.0, 2.98 };
        struct rdma_latency lat;

        /* ib_write_bw's 111.72 Gb/s: 20000 x 64 KiB on 4 QPs in 0.3754 s (perftest counts every QP's
         * iterations). */
        CHECK(fabs(rdma_gbps(65536ULL * 20000 * 4, 0.375432) - 111.72) < 0.01);
        CHECK(rdma_gbps(1, 0) == 0);
        CHECK(fabs(rdma_payload_gbps(200000, 4096) - 196.07) < 0.01);
        CHECK(fabs(rdma_payload_gbps(200000, 1024) - 185.17) < 0.01);
        CHECK(rdma_payload_gbps(-1, 4096) == 0 && rdma_payload_gbps(200000, 0) == 0);

        CHECK(rdma_latency_compute(rtt, 0, &lat) == -EINVAL);
        CHECK(rdma_latency_compute(rtt, 10, &lat) == 0);
        /* The two stragglers are cut as perftest cuts them; the rest halved. */
        CHECK(lat.count == 8);
        CHECK(fabs(lat.min_us - 1.45) < 1e-9 && fabs(lat.max_us - 1.6) < 1e-9);
        CHECK(fabs(lat.typical_us - 1.495) < 1e-9);
        CHECK(fabs(lat.avg_us - 1.505) < 1e-9);
        CHECK(lat.p99_us == lat.max_us);
}

static void test_json(void)
{
        struct rdma_rail rails[2] = {
                { .device = "rocep1s0f1",
                  .netdev = "enp1s0f1np1",
                  .gid_index = 3,
                  .speed_mbps = 200000,
                  .active_mtu = 4096 },
                { .device = "roceP2p1s0f1", .netdev = "enP2p1s0f1np1", .gid_index = 1 },
        };
        struct rdma_rail_figures f[2] = {
                { .rail = &rails[0], .qps = 4, .bytes = 12500000000ULL, .writes = 190735, .seconds = 1.0 },
                { .rail = &rails[1], .qps = 4, .bytes = 10000000000ULL, .writes = 152588, .seconds = 0.8 },
        };
        struct rdma_latency lat = { .count = 998, .typical_us = 1.47 };
        json_object *d = rdma_direction_json("forward", "10.0.0.1", "10.0.0.2", f, 2), *r, *v;

        /* Side by side: the port moved both rails' bytes in the longer time. */
        CHECK(json_object_object_get_ex(d, "gbps", &v) && fabs(json_object_get_double(v) - 180) < 1e-9);
        CHECK(json_object_object_get_ex(d, "rails", &r) && json_object_array_length(r) == 2);
        CHECK(json_object_object_get_ex(json_object_array_get_idx(r, 1), "gbps", &v) &&
              fabs(json_object_get_double(v) - 100) < 1e-9);
        CHECK_STREQ(json_object_get_string(json_object_object_get(json_object_array_get_idx(r, 1), "name")),
                    "roceP2p1s0f1");
        CHECK_STREQ(
                json_object_get_string(json_object_object_get(json_object_array_get_idx(r, 0), "netdev")),
                "enp1s0f1np1");
        CHECK_STREQ(json_object_get_string(json_object_object_get(d, "direction")), "forward");
        json_object_put(d);

        d = rdma_latency_json(&lat, 2, 1000);
        CHECK_STREQ(json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN),
                    "{\"iterations\":1000,\"size\":2,\"min_us\":0.000,\"max_us\":0.000,\"typical_us\":1.470,"
                    "\"avg_us\":0.000,\"stdev_us\":0.000,\"p99_us\":0.000,\"p99_9_us\":0.000}");
        json_object_put(d);

        d = rdma_rails_json(rails, 2);
        CHECK(json_object_array_length(d) == 2);
        CHECK(json_object_object_get_ex(json_object_array_get_idx(d, 1), "speed_gbps", &v) && v == NULL);
        json_object_put(d);
        CHECK(fabs(rdma_port_expected_gbps(rails, 2) - 196.07) < 0.01);
        CHECK(rdma_port_expected_gbps(rails, 0) == 0);
}

int main(void)
{
        RUN(test_options);
        RUN(test_rails_spark_twins);
        RUN(test_rails_gid_index_5);
        RUN(test_rails_by_address);
        RUN(test_rails_unusable);
        RUN(test_rails_named_gid_index);
        RUN(test_twins_named);
        RUN(test_conn_data);
        RUN(test_arithmetic);
        RUN(test_json);
        return test_result();
}
