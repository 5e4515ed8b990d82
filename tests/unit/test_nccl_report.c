/* What sparkd-probe-nccl computes without a GPU: sizes, counts, nccl-tests' formulas, the result
 * check, the transport read from NCCL's INFO log, and the hang diagnosis. */
#include <math.h>
#include <stdlib.h>

#include "probes/nccl_report.h"
#include "test.h"

static bool near(double a, double b)
{
        return fabs(a - b) < 1e-9;
}

static void test_sizes(void)
{
        uint64_t s[NCCL_MAX_SIZES];

        CHECK(nccl_sizes(1 << 20, 256 << 20, 2, s, NCCL_MAX_SIZES) == 9);
        CHECK(s[0] == 1 << 20 && s[8] == 256 << 20);
        CHECK(nccl_sizes(256 << 20, 1ULL << 30, 4, s, NCCL_MAX_SIZES) == 2);
        CHECK(s[0] == 256 << 20 && s[1] == 1ULL << 30);
        /* max is a bound, not a size: 3M, 6M, and 12M is past 10M. */
        CHECK(nccl_sizes(3 << 20, 10 << 20, 2, s, NCCL_MAX_SIZES) == 2);
        CHECK(s[1] == 6 << 20);
        CHECK(nccl_sizes(1024, 1024, 2, s, NCCL_MAX_SIZES) == 1);
        /* No overflow at the top of the range. */
        CHECK(nccl_sizes(4ULL << 30, 8ULL << 30, 1024, s, NCCL_MAX_SIZES) == 1);
        CHECK(nccl_sizes(1024, 8ULL << 30, 2, s, 4) == 4);
        CHECK(nccl_sizes(0, 1024, 2, s, 4) == 0 && nccl_sizes(1024, 4096, 1, s, 4) == 0);
}

static void test_counts(void)
{
        struct nccl_counts c;

        nccl_counts(NCCL_OP_ALL_REDUCE, 1 << 20, 2, &c);
        CHECK(c.send_count == 262144 && c.recv_count == 262144 && c.bytes == 1 << 20);
        /* all_gather: each rank sends its share, the output is the whole size. */
        nccl_counts(NCCL_OP_ALL_GATHER, 1 << 20, 2, &c);
        CHECK(c.send_count == 131072 && c.recv_count == 262144 && c.bytes == 1 << 20);
        /* Shares are whole 16-byte chunks: 250 floats over 2 ranks is 124 each, 992 bytes. */
        nccl_counts(NCCL_OP_ALL_GATHER, 1000, 2, &c);
        CHECK(c.send_count == 124 && c.recv_count == 248 && c.bytes == 992);
        nccl_counts(NCCL_OP_ALL_GATHER, 1 << 20, 3, &c);
        CHECK(c.send_count == 87380 && c.recv_count == 262140);
        nccl_counts(NCCL_OP_ALL_GATHER, 16, 2, &c);
        CHECK(c.bytes == 0);
}

static void test_bandwidth(void)
{
        /* nccl-tests: algbw = bytes / 1e9 / seconds; all_reduce busbw * 2(n-1)/n, all_gather * (n-1)/n. */
        CHECK(near(nccl_algbw(1000000000, 1.0), 1.0));
        CHECK(near(nccl_algbw(1 << 30, 0.05), 21.47483648));
        CHECK(nccl_algbw(1 << 20, 0) == 0);
        CHECK(near(nccl_busbw(NCCL_OP_ALL_REDUCE, 10.0, 2), 10.0));
        CHECK(near(nccl_busbw(NCCL_OP_ALL_REDUCE, 10.0, 8), 17.5));
        CHECK(near(nccl_busbw(NCCL_OP_ALL_GATHER, 10.0, 2), 5.0));
        CHECK(near(nccl_busbw(NCCL_OP_ALL_GATHER, 10.0, 8), 8.75));
        CHECK(nccl_busbw(NCCL_OP_ALL_REDUCE, 10.0, 0) == 0);
}

static void test_check(void)
{
        enum { N = 4096 };
        float *out = malloc(N * sizeof(float));
        struct nccl_mismatch m;
        enum nccl_op op;

        CHECK(nccl_op_from_name("all_gather", &op) == 0 && op == NCCL_OP_ALL_GATHER);
        CHECK(nccl_op_from_name("broadcast", &op) < 0);
        CHECK_STREQ(nccl_op_name(NCCL_OP_ALL_REDUCE), "all_reduce");
        /* Neighbouring elements differ and whole numbers stay exact when summed. */
        CHECK(nccl_pattern(0, 0) != nccl_pattern(1, 0) || nccl_pattern(1, 0) != nccl_pattern(2, 0));
        CHECK(nccl_pattern(7, 1) == nccl_pattern(7, 0) + 1);
        for (size_t i = 0; i < N; i++)
                out[i] = nccl_pattern(i, 0) + nccl_pattern(i, 1) + nccl_pattern(i, 2);
        CHECK(nccl_check(NCCL_OP_ALL_REDUCE, out, N, N, 3, &m) && m.wrong == 0);
        out[100] += 1;
        out[200] = NAN;
        CHECK(!nccl_check(NCCL_OP_ALL_REDUCE, out, N, N, 3, &m));
        CHECK(m.wrong == 2 && m.first == 100 && m.got == m.expected + 1);
        /* all_gather: rank r's part at r * share. */
        for (size_t i = 0; i < N; i++)
                out[i] = nccl_pattern(i % (N / 2), (int)(i / (N / 2)));
        CHECK(nccl_check(NCCL_OP_ALL_GATHER, out, N, N / 2, 2, &m));
        /* The parts in the wrong order is wrong. */
        for (size_t i = 0; i < N; i++)
                out[i] = nccl_pattern(i % (N / 2), 1 - (int)(i / (N / 2)));
        CHECK(!nccl_check(NCCL_OP_ALL_GATHER, out, N, N / 2, 2, &m) && m.first == 0);
        free(out);
}

static struct nccl_transport parse(const char *const *lines)
{
        struct nccl_transport t = { 0 };

        for (; *lines; lines++)
                nccl_transport_parse_line(&t, *lines);
        return t;
}

static void test_log_socket(void)
{
        static const char *const log[] = {
                "node-a:4242:4250 [0] NCCL INFO Bootstrap: Using fa:10.99.0.1<0>\n",
                "node-a:4242:4250 [0] NCCL INFO NET/IB : No device found.\n",
                "node-a:4242:4250 [0] NCCL INFO NET/Socket : Using [0]fa:10.99.0.1<0>\n",
                "node-a:4242:4250 [0] NCCL INFO Using network Socket\n",
                "node-a:4242:4261 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/Socket/0\n",
                "node-a:4242:4261 [0] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [receive] via NET/Socket/0\n",
                "node-a:4242:4261 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] [send] via NET/Socket/0\n",
                "some line that is not NCCL's\n",
                NULL,
        };
        struct nccl_transport t = parse(log);
        json_object *j, *v;

        CHECK_STREQ(t.network, "Socket");
        CHECK_STREQ(t.socket_devices, "fa:10.99.0.1<0>");
        CHECK(t.ib_no_device && !t.ib_devices[0]);
        CHECK_STREQ(t.paths, "NET/Socket");
        CHECK(t.channels == 3 && !t.gdr_used);
        /* Sockets are a fallback only where the node has RDMA devices. */
        CHECK(!nccl_transport_socket_fallback(&t, ""));
        CHECK(!nccl_transport_socket_fallback(&t, NULL));
        CHECK(nccl_transport_socket_fallback(&t, "mlx5_0,mlx5_1"));
        j = nccl_transport_to_json(&t, "mlx5_0,mlx5_1");
        CHECK(json_object_object_get_ex(j, "socket_fallback", &v) && json_object_get_boolean(v));
        CHECK(json_object_object_get_ex(j, "ib_device_found", &v) && !json_object_get_boolean(v));
        CHECK(json_object_object_get_ex(j, "paths", &v) && json_object_array_length(v) == 1);
        json_object_put(j);
}

static void test_log_ib(void)
{
        static const char *const log[] = {
                "spark1:77:80 [0] NCCL INFO NET/IB : Using [0]rocep1s0f1:1/RoCE [1]roceP2p1s0f1:1/RoCE "
                "[RO]; OOB "
                "enp1s0f1np1:192.168.177.11<0>\n",
                "spark1:77:80 [0] NCCL INFO Using network IB\n",
                "spark1:77:80 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for HCA 0 'rocep1s0f1'\n",
                "spark1:77:80 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'roceP2p1s0f1' (no "
                "module)\n",
                "spark1:77:91 [0] NCCL INFO Channel 00/0 : 1[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n",
                "spark1:77:91 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[0] [send] via "
                "NET/IB/1(0)/GDRDMA/Shared\n",
                "spark1:77:91 [0] NCCL INFO Channel 02/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n",
                "spark1:77:91 [0] NCCL INFO Channel 03 : 0[0] -> 1[1] via SHM/direct/direct\n",
                "spark1:77:91 [0] NCCL INFO Channel 04/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n",
                "spark1:77:95 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote "
                "peer\n",
                NULL,
        };
        struct nccl_transport t = parse(log);

        CHECK_STREQ(t.network, "IB");
        CHECK_STREQ(t.ib_devices, "rocep1s0f1:1/RoCE roceP2p1s0f1:1/RoCE");
        CHECK(t.gdr_enabled_hcas == 1 && t.gdr_disabled_hcas == 1 && t.gdr_used);
        CHECK_STREQ(t.paths, "NET/IB,P2P/CUMEM,SHM/direct");
        CHECK(t.channels == 5);
        CHECK_STREQ(t.last_warning, "socketProgress: Connection closed by remote peer");
        CHECK(!nccl_transport_socket_fallback(&t, "rocep1s0f1,roceP2p1s0f1"));
}

static void test_hang(void)
{
        struct nccl_transport t = { .gdr_enabled_hcas = 2 };
        struct nccl_hang h = {
                .call = "ncclCommInitRank",
                .phase = "comm_init",
                .waited_sec = 30.04,
                .unified_memory = true,
                .gdr_level = "SYS",
                .dmabuf_enable = "0",
                .transport = &t,
        };
        char error[512];
        json_object *d, *v;

        CHECK(nccl_env_allows_gdr(NULL) && nccl_env_allows_gdr("") && nccl_env_allows_gdr("PXB"));
        CHECK(!nccl_env_allows_gdr("LOC") && !nccl_env_allows_gdr("loc") && !nccl_env_allows_gdr("0"));

        /* GB10 with GPU Direct RDMA through peermem: the cause and safe mode. */
        d = nccl_hang_diagnose(&h, error, sizeof(error));
        CHECK(strncmp(error, "hang in ncclCommInitRank: not done after 30.0 s", 47) == 0);
        CHECK(strstr(error, "safe mode") != NULL);
        CHECK(json_object_object_get_ex(d, "cause", &v) &&
              strstr(json_object_get_string(v), "nvidia_peermem"));
        CHECK(strstr(json_object_get_string(v), "NCCL_NET_GDR_LEVEL=SYS, NCCL_DMABUF_ENABLE=0"));
        CHECK(strstr(json_object_get_string(v), "enabled it for 2 HCAs"));
        CHECK(json_object_object_get_ex(d, "fix", &v) && strstr(json_object_get_string(v), "--mode safe"));
        CHECK(json_object_object_get_ex(d, "hang_in", &v) &&
              strcmp(json_object_get_string(v), "ncclCommInitRank") == 0);
        json_object_put(d);

        /* GDR left to NCCL (unset) is allowed too. */
        h.gdr_level = NULL;
        h.dmabuf_enable = NULL;
        d = nccl_hang_diagnose(&h, error, sizeof(error));
        CHECK(json_object_object_get_ex(d, "cause", &v) && v && strstr(json_object_get_string(v), "unset"));
        json_object_put(d);

        /* Safe mode already, or no unified memory: a hang, but not that one. */
        h.gdr_level = "LOC";
        d = nccl_hang_diagnose(&h, error, sizeof(error));
        CHECK_STREQ(error, "hang in ncclCommInitRank: not done after 30.0 s (phase comm_init)");
        CHECK(json_object_object_get_ex(d, "cause", &v) && v == NULL);
        json_object_put(d);
        h.gdr_level = "SYS";
        h.unified_memory = false;
        snprintf(t.last_warning, sizeof(t.last_warning), "connect to 10.0.0.2<42> failed");
        d = nccl_hang_diagnose(&h, error, sizeof(error));
        CHECK_STREQ(error, "hang in ncclCommInitRank: not done after 30.0 s (phase comm_init); NCCL warned: "
                           "connect to 10.0.0.2<42> failed");
        json_object_put(d);
        /* Under a second, in milliseconds. */
        h.waited_sec = 0.0012;
        t.last_warning[0] = '\0';
        d = nccl_hang_diagnose(&h, error, sizeof(error));
        CHECK_STREQ(error, "hang in ncclCommInitRank: not done after 1 ms (phase comm_init)");
        CHECK(json_object_object_get_ex(d, "waited_s", &v) && json_object_get_double(v) == 0.001);
        json_object_put(d);
}

int main(void)
{
        RUN(test_sizes);
        RUN(test_counts);
        RUN(test_bandwidth);
        RUN(test_check);
        RUN(test_log_socket);
        RUN(test_log_ib);
        RUN(test_hang);
        return test_result();
}
