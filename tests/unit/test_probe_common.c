#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "common/macro.h"
#include "probes/probe_common.h"
#include "test.h"

static void test_parse_size(void)
{
        uint64_t v = 0;

        CHECK(probe_parse_size("64", 1, 1 << 20, &v) == 0 && v == 64);
        CHECK(probe_parse_size("128K", 1, 1 << 20, &v) == 0 && v == 131072);
        CHECK(probe_parse_size("128k", 1, 1 << 20, &v) == 0 && v == 131072);
        CHECK(probe_parse_size("1M", 1, 1 << 20, &v) == 0 && v == 1048576);
        CHECK(probe_parse_size("1MiB", 1, 1 << 20, &v) == 0 && v == 1048576);
        CHECK(probe_parse_size("2M", 1, 1 << 20, &v) == -ERANGE);
        CHECK(probe_parse_size("0", 1, 1 << 20, &v) == -ERANGE);
        CHECK(probe_parse_size("", 1, 1 << 20, &v) == -EINVAL);
        CHECK(probe_parse_size("-1", 1, 1 << 20, &v) == -EINVAL);
        CHECK(probe_parse_size(" 1", 1, 1 << 20, &v) == -EINVAL);
        CHECK(probe_parse_size("12X", 1, 1 << 20, &v) == -EINVAL);
        CHECK(probe_parse_size("1.5M", 1, 1 << 20, &v) == -EINVAL);
        CHECK(probe_parse_size("99999999999999999999", 1, UINT64_MAX, &v) == -ERANGE);
        CHECK(probe_parse_size("18446744073709551615G", 1, UINT64_MAX, &v) == -ERANGE);
        CHECK(probe_parse_size(NULL, 1, 1 << 20, &v) == -EINVAL);
}

static void test_parse_ipv4(void)
{
        struct in_addr a;

        CHECK(probe_parse_ipv4("10.99.0.2", &a) == 0 && a.s_addr == htonl(0x0a630002));
        CHECK(probe_parse_ipv4("", &a) == 0 && a.s_addr == htonl(INADDR_ANY));
        CHECK(probe_parse_ipv4("10.99.0", &a) == -EINVAL);
        CHECK(probe_parse_ipv4("300.1.1.1", &a) == -EINVAL);
        CHECK(probe_parse_ipv4("spark2", &a) == -EINVAL);
        CHECK(probe_parse_ipv4("fe80::1", &a) == -EINVAL);
}

static void test_option_messages(void)
{
        char err[PROBE_ERROR_MAX] = "";
        struct in_addr a;
        uint64_t v;
        double d;

        CHECK(probe_opt_uint("--streams", "65", 1, 64, &v, err, sizeof(err)) == -ERANGE);
        CHECK_STREQ(err, "--streams wants a whole number from 1 to 64, not '65'");
        CHECK(probe_opt_uint("--streams", "4", 1, 64, &v, err, sizeof(err)) == 0 && v == 4);
        CHECK(probe_opt_uint("--port", "http", 0, 65535, &v, err, sizeof(err)) == -EINVAL);
        CHECK_STREQ(err, "--port wants a whole number from 0 to 65535, not 'http'");
        CHECK(probe_opt_seconds("--deadline", "0", 0, 86400, &d, err, sizeof(err)) == -ERANGE);
        CHECK_STREQ(err, "--deadline wants seconds, more than 0 and at most 86400, not '0'");
        CHECK(probe_opt_seconds("--deadline", "0.5", 0, 86400, &d, err, sizeof(err)) == 0 && d == 0.5);
        CHECK(probe_opt_seconds("--duration", "nan", 0, 86400, &d, err, sizeof(err)) < 0);
        CHECK(probe_opt_ipv4("--client", "", false, &a, err, sizeof(err)) == -EINVAL);
        CHECK_STREQ(err, "--client wants an IPv4 address like 10.0.0.2, not ''");
        CHECK(probe_opt_ipv4("--bind", "", true, &a, err, sizeof(err)) == 0);
        CHECK(probe_opt_size("--size", "128K", 1, 16 << 20, &v, err, sizeof(err)) == 0 && v == 131072);
        CHECK(probe_opt_size("--size", "32M", 1, 16 << 20, &v, err, sizeof(err)) == -ERANGE);
        CHECK_STREQ(err,
                    "--size wants a size in bytes from 1 to 16777216 (K and M suffixes allowed), not '32M'");
}

/* A helper's command line as the table reads it: its own options next to the shared ones. */
struct toy {
        struct probe_args args;
        unsigned count;
        uint16_t small;
        double wait;
        uint64_t size;
        bool is_fast;
        const char *name;
};

/* The command line "toy ARGS...", ARGS ending with NULL. */
#define ARGV(...)   ((char *[]){ "toy", __VA_ARGS__ })
#define TOY(member) PROBE_FIELD(struct toy, member)

/* Reads argv (ARGV) with a table of each kind of argument. */
static int toy_parse(struct toy *t, char *err, size_t size, char **argv)
{
        static const struct probe_opt opts[] = {
                PROBE_OPTS_SOCKET,
                { "count", 'n', PROBE_ARG_UINT, TOY(count), 1, 10, PROBE_OPT_CLIENT_ONLY },
                { "small", 0, PROBE_ARG_UINT, TOY(small), 0, 300 },
                { "wait", 'w', PROBE_ARG_SECONDS, TOY(wait), 0, 60, PROBE_OPT_CLIENT_ONLY },
                { "size", 0, PROBE_ARG_SIZE, TOY(size), 1, 1 << 20 },
                { "fast", 0, PROBE_ARG_FLAG, TOY(is_fast), 0, 0, PROBE_OPT_CLIENT_ONLY },
                { "name", 0, PROBE_ARG_TEXT, TOY(name) },
                PROBE_OPT_DEADLINE(0),
                {},
        };
        static const struct probe_cmdline cmdline = { .prog = "toy", .opts = opts };
        int argc = 0;

        while (argv[argc])
                argc++;
        *t = (struct toy){ .args.deadline = 30, .count = 3 };
        err[0] = '\0';
        return probe_cmdline_parse(&cmdline, argc, argv, &t->args, t, err, size);
}

static void test_cmdline(void)
{
        struct toy t;
        char err[PROBE_ERROR_MAX];

        CHECK(toy_parse(&t, err, sizeof(err), ARGV("--client", "10.0.0.2", "-p", "80", NULL)) == 0);
        CHECK(!t.args.is_server && t.args.port == 80 && t.args.has_port && !t.args.has_bind);
        CHECK_STREQ(t.args.remote_arg, "10.0.0.2");
        CHECK(t.args.remote.s_addr == htonl(0x0a000002) && t.count == 3 && t.args.deadline == 30);
        CHECK(toy_parse(&t, err, sizeof(err),
                        ARGV("-s", "-B", "", "--small", "300", "--size", "2K", "--name", "x", "--deadline",
                             "0.5", "--json", NULL)) == 0);
        CHECK(t.args.is_server && t.args.has_bind && t.small == 300 && t.size == 2048 && t.args.is_json);
        CHECK(t.args.deadline == 0.5 && !t.args.has_client_options);
        CHECK_STREQ(t.name, "x");
        CHECK(toy_parse(&t, err, sizeof(err),
                        ARGV("-c", "10.0.0.2", "-p", "1", "-n", "10", "-w", "2", "--fast", NULL)) == 0);
        CHECK(t.count == 10 && t.wait == 2 && t.is_fast && t.args.has_client_options);

        CHECK(toy_parse(&t, err, sizeof(err), ARGV("--server", "--count", "2", NULL)) == -EINVAL);
        CHECK_STREQ(err, "--count, --wait and --fast are for the client");
        CHECK(toy_parse(&t, err, sizeof(err), ARGV("--client", "10.0.0.2", NULL)) == -EINVAL);
        CHECK_STREQ(err, "the client needs the server's --port (1..65535)");
        CHECK(toy_parse(&t, err, sizeof(err), ARGV("--server", "--client", "10.0.0.2", NULL)) == -EINVAL);
        CHECK_STREQ(err, "give either --server or --client ADDR");
        CHECK(toy_parse(&t, err, sizeof(err), ARGV(NULL)) == -EINVAL);
        CHECK_STREQ(err, "give either --server or --client ADDR");
        CHECK(toy_parse(&t, err, sizeof(err), ARGV("--server", "--small", "301", NULL)) == -EINVAL);
        CHECK_STREQ(err, "--small wants a whole number from 0 to 300, not '301'");
        CHECK(toy_parse(&t, err, sizeof(err), ARGV("--server", "--port", NULL)) == -EINVAL);
        CHECK_STREQ(err, "--port needs a value");
        CHECK(toy_parse(&t, err, sizeof(err), ARGV("--server", "--bogus", NULL)) == -EINVAL);
        CHECK_STREQ(err, "unknown option --bogus");
        CHECK(toy_parse(&t, err, sizeof(err), ARGV("--server", "extra", NULL)) == -EINVAL);
        CHECK_STREQ(err, "unexpected argument 'extra'");
        CHECK(toy_parse(&t, err, sizeof(err), ARGV("--client", "0.0.0.0", NULL)) == -EINVAL);
        CHECK_STREQ(err, "--client wants an IPv4 address like 10.0.0.2, not '0.0.0.0'");
        /* --help and --version end the reading: what follows is not looked at. */
        CHECK(toy_parse(&t, err, sizeof(err), ARGV("--help", "--bogus", NULL)) == 0 && t.args.want_help);
        CHECK(toy_parse(&t, err, sizeof(err), ARGV("-s", "--version", "x", NULL)) == 0 &&
              t.args.want_version);
}

static void test_gbps(void)
{
        /* Decimal, like iperf3: 1.25e9 bytes in one second are 10 Gb/s. */
        CHECK(fabs(probe_gbps(1250000000ULL, 1.0) - 10.0) < 1e-9);
        CHECK(fabs(probe_gbps(1250000000ULL, 2.0) - 5.0) < 1e-9);
        CHECK(fabs(probe_gbps(125000000000ULL, 4.0) - 250.0) < 1e-9);
        CHECK(probe_gbps(1000, 0) == 0);
        CHECK(probe_gbps(1000, -1) == 0);
        CHECK(probe_gbps(1000, NAN) == 0);
}

static void test_percentile_nearest_rank(void)
{
        double s[1000];

        for (int i = 0; i < 100; i++)
                s[i] = i + 1; /* 1..100 */
        CHECK(probe_percentile(s, 100, 99) == 99);
        CHECK(probe_percentile(s, 100, 50) == 50);
        CHECK(probe_percentile(s, 100, 100) == 100);
        CHECK(probe_percentile(s, 100, 0.5) == 1);
        /* Ten samples: the 99th percentile is the largest (rank ceil(9.9) = 10). */
        CHECK(probe_percentile(s, 10, 99) == 10);
        CHECK(probe_percentile(s, 1, 99) == 1);
        CHECK(probe_percentile(s, 0, 99) == 0);
        for (int i = 0; i < 1000; i++)
                s[i] = i;
        CHECK(probe_percentile(s, 1000, 99) == 989); /* rank 990 */
}

static void test_stats(void)
{
        double odd[] = { 30, 10, 20, 50, 40 };
        double even[] = { 4, 1, 3, 2 };
        double one[] = { 7.5 };
        double many[1000];
        struct probe_stats st;

        CHECK(probe_stats_compute(odd, ARRAY_SIZE(odd), &st) == 0);
        CHECK(st.count == 5 && st.min == 10 && st.median == 30 && st.max == 50 && st.mean == 30);
        CHECK(st.p99 == 50);
        CHECK(odd[0] == 10 && odd[4] == 50); /* sorted in place */

        CHECK(probe_stats_compute(even, ARRAY_SIZE(even), &st) == 0);
        CHECK(st.median == 2.5 && st.min == 1 && st.max == 4 && st.mean == 2.5);

        CHECK(probe_stats_compute(one, 1, &st) == 0);
        CHECK(st.min == 7.5 && st.median == 7.5 && st.p99 == 7.5 && st.max == 7.5);

        /* A long tail: p99 sees it, the median does not. */
        for (int i = 0; i < 1000; i++)
                many[i] = i < 985 ? 10 + (i % 7) : 1000 + i;
        CHECK(probe_stats_compute(many, 1000, &st) == 0);
        CHECK(st.min <= st.median && st.median <= st.p99 && st.p99 <= st.max);
        CHECK(st.median < 20 && st.p99 >= 1000 && st.max == 1999);

        CHECK(probe_stats_compute(many, 0, &st) == -EINVAL);
}

static void test_token_equal(void)
{
        CHECK(probe_token_equal("0123456789abcdef", "0123456789abcdef", 16));
        CHECK(!probe_token_equal("0123456789abcdef", "0123456789abcdeF", 16));
        CHECK(!probe_token_equal("0123456789abcdef", "1123456789abcdef", 16));
        CHECK(probe_token_equal("", "", 0));
        CHECK(!probe_token_equal("0123456789abcdef", "0123456789abcde", 15));
        CHECK(!probe_token_equal("0123456789abcdef", "0123456789abcdef0", 17));
        CHECK(!probe_token_equal("0123456789abcdef", "", 0));
        /* Only got_len bytes count: what follows the token on the wire is not part of it. */
        CHECK(probe_token_equal("abc", "abc\n{...}", 3));
}

static void test_token_from_env(void)
{
        const char *t = "x";

        unsetenv(PROBE_TOKEN_ENV);
        CHECK(probe_token_from_env(&t) == 0 && t == NULL);
        setenv(PROBE_TOKEN_ENV, "f00dfeed", 1);
        CHECK(probe_token_from_env(&t) == 0 && t && strcmp(t, "f00dfeed") == 0);
        setenv(PROBE_TOKEN_ENV, "", 1);
        CHECK(probe_token_from_env(&t) == -EINVAL);
        setenv(PROBE_TOKEN_ENV, "two\nlines", 1);
        CHECK(probe_token_from_env(&t) == -EINVAL);
        unsetenv(PROBE_TOKEN_ENV);
}

static void test_json_double(void)
{
        json_object *j = probe_json_double(9.41199999, 3);

        CHECK_STREQ(json_object_to_json_string(j), "9.412");
        json_object_put(j);
        j = probe_json_double(-0.00001, 1);
        CHECK_STREQ(json_object_to_json_string(j), "0.0");
        json_object_put(j);
        j = probe_json_double(12, 0);
        CHECK_STREQ(json_object_to_json_string(j), "12");
        json_object_put(j);
        CHECK(probe_json_double(NAN, 1) == NULL);
        CHECK(probe_json_double(INFINITY, 1) == NULL);
}

static void test_result_error(void)
{
        json_object *line = probe_result_line(probe_result_error("tcp", "connecting", "connection refused"));

        CHECK_STREQ(json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN),
                    "{\"result\":{\"kind\":\"tcp\",\"ok\":false,\"error\":\"connection refused\","
                    "\"phase\":\"connecting\"}}");
        json_object_put(line);
}

static const struct probe_hello hello4 = {
        .kind = "tcp",
        .version = PROBE_PROTO_VERSION,
        .session = "00112233aabbccdd",
        .streams = 4,
        .stream = 2,
        .size = 131072,
};

static void test_hello_round_trip(void)
{
        struct probe_hello h;
        char buf[PROBE_HELLO_MAX], why[128] = "";
        size_t len;

        CHECK(probe_hello_format("s3cret", &hello4, buf, sizeof(buf), &len) == 0);
        CHECK(strncmp(buf, "s3cret\n{", 8) == 0 && buf[len - 1] == '\n');
        CHECK(probe_hello_parse(buf, len, "s3cret", &h, why, sizeof(why)) == 0);
        CHECK_STREQ(h.kind, "tcp");
        CHECK_STREQ(h.session, "00112233aabbccdd");
        CHECK(h.streams == 4 && h.stream == 2 && h.size == 131072 && h.count == 0);
        /* Every prefix asks for more, none is taken for a whole hello. */
        for (size_t i = 0; i < len; i++)
                CHECK(probe_hello_parse(buf, i, "s3cret", &h, why, sizeof(why)) == -EAGAIN);
        /* Without a token of its own, the server takes any. */
        CHECK(probe_hello_parse(buf, len, NULL, &h, why, sizeof(why)) == 0);
        CHECK(probe_hello_format(NULL, &hello4, buf, sizeof(buf), &len) == 0 && buf[0] == '\n');
        CHECK(probe_hello_parse(buf, len, NULL, &h, why, sizeof(why)) == 0);
        CHECK(probe_hello_format("s3cret", &hello4, buf, 10, &len) == -ENOBUFS);
        CHECK(h.reverse_ms == 0 && !strstr(buf, "reverse_ms"));
        /* Both directions: the server learns how long to send back. */
        {
                struct probe_hello both = hello4;

                both.reverse_ms = 5000;
                CHECK(probe_hello_format("s3cret", &both, buf, sizeof(buf), &len) == 0);
                CHECK(probe_hello_parse(buf, len, "s3cret", &h, why, sizeof(why)) == 0);
                CHECK(h.reverse_ms == 5000);
        }
        CHECK(probe_hello_parse(
                      "t\n{\"kind\":\"tcp\",\"version\":1,\"session\":\"a\",\"streams\":1,\"stream\":0,"
                      "\"size\":1,\"count\":0,\"reverse_ms\":-5}\n",
                      strlen("t\n{\"kind\":\"tcp\",\"version\":1,\"session\":\"a\",\"streams\":1,"
                             "\"stream\":0,\"size\":1,\"count\":0,\"reverse_ms\":-5}\n"),
                      NULL, &h, why, sizeof(why)) == -EPROTO);
        CHECK_STREQ(why, "hello with an invalid reverse_ms");
}

static void test_hello_refused(void)
{
        struct probe_hello h;
        char buf[PROBE_HELLO_MAX], why[128] = "";
        size_t len;

        CHECK(probe_hello_format("wrong", &hello4, buf, sizeof(buf), &len) == 0);
        CHECK(probe_hello_parse(buf, len, "s3cret", &h, why, sizeof(why)) == -EACCES);
        CHECK_STREQ(why, "wrong token");
        /* The token line decides alone: refused before the hello line has arrived. */
        CHECK(probe_hello_parse("wrong\n", 6, "s3cret", &h, why, sizeof(why)) == -EACCES);
        /* Missing token (by-hand client against an orchestrated server). */
        CHECK(probe_hello_format(NULL, &hello4, buf, sizeof(buf), &len) == 0);
        CHECK(probe_hello_parse(buf, len, "s3cret", &h, why, sizeof(why)) == -EACCES);
        CHECK_STREQ(why, "missing token");
        /* No line break for longer than any token: not a client of ours. */
        memset(buf, 'A', 300);
        CHECK(probe_hello_parse(buf, 300, "s3cret", &h, why, sizeof(why)) == -EACCES);
}

static void test_hello_malformed(void)
{
        static const char *const bad[] = {
                "t\nnot json\n",
                "t\n[1,2]\n",
                "t\n{\"version\":1,\"session\":\"a\",\"streams\":1,\"stream\":0,\"size\":1,\"count\":1}\n",
                "t\n{\"kind\":\"tcp\",\"session\":\"a\",\"streams\":1,\"stream\":0,\"size\":1,\"count\":1}"
                "\n",
                "t\n{\"kind\":\"tcp\",\"version\":1,\"streams\":1,\"stream\":0,\"size\":1,\"count\":1}\n",
                "t\n{\"kind\":\"tcp\",\"version\":1,\"session\":\"a\",\"streams\":2,\"stream\":2,\"size\":1,"
                "\"count\":1}\n",
                "t\n{\"kind\":\"tcp\",\"version\":1,\"session\":\"a\",\"streams\":0,\"stream\":0,\"size\":1,"
                "\"count\":1}\n",
                "t\n{\"kind\":\"tcp\",\"version\":1,\"session\":\"a\",\"streams\":1,\"stream\":-1,\"size\":"
                "1,"
                "\"count\":1}\n",
                "t\n{\"kind\":\"tcp\",\"version\":1,\"session\":\"a\",\"streams\":\"1\",\"stream\":0,"
                "\"size\":1,"
                "\"count\":1}\n",
                "t\n{\"kind\":\"a-kind-name-too-long\",\"version\":1,\"session\":\"a\",\"streams\":1,"
                "\"stream\":0,"
                "\"size\":1,\"count\":1}\n",
        };
        struct probe_hello h;
        char why[128];

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
                why[0] = '\0';
                CHECK(probe_hello_parse(bad[i], strlen(bad[i]), "t", &h, why, sizeof(why)) == -EPROTO);
                CHECK(why[0] != '\0');
        }
        CHECK(probe_hello_parse("t\n{\"kind\":\"tcp\",\"version\":2}\n", 29, "t", &h, why, sizeof(why)) ==
              -EPROTO);
        CHECK_STREQ(why, "protocol version 2 is not supported (this side speaks 1)");
}

int main(void)
{
        RUN(test_parse_size);
        RUN(test_parse_ipv4);
        RUN(test_option_messages);
        RUN(test_cmdline);
        RUN(test_gbps);
        RUN(test_percentile_nearest_rank);
        RUN(test_stats);
        RUN(test_token_equal);
        RUN(test_token_from_env);
        RUN(test_json_double);
        RUN(test_result_error);
        RUN(test_hello_round_trip);
        RUN(test_hello_refused);
        RUN(test_hello_malformed);
        return test_result();
}
