#include <errno.h>
#include <string.h>

#include "macro.h"
#include "probe_kinds.h"
#include "test.h"

static json_object *parse(const char *s)
{
        return s ? json_tokener_parse(s) : NULL;
}

static int check(const char *kind, const char *params_json, json_object **out, char *err, size_t size)
{
        json_object *in = parse(params_json);
        int r = probe_kind_params(probe_kind_find(kind), in, out, err, size);

        json_object_put(in);
        return r;
}

static void test_table(void)
{
        char names[128];

        CHECK(probe_kind_find("rtt") && !probe_kind_find("rtt")->is_bandwidth);
        CHECK(probe_kind_find("tcp") && probe_kind_find("tcp")->is_bandwidth);
        CHECK(probe_kind_find("tcp")->higher_is_better && !probe_kind_find("rtt")->higher_is_better);
        CHECK(probe_kind_find("warp") == NULL && probe_kind_find(NULL) == NULL);
        for (size_t i = 0; probe_kind_at(i); i++) {
                const struct probe_kind *k = probe_kind_at(i);

                CHECK(probe_kind_index(k) == i && i < PROBE_KINDS_MAX);
                CHECK(k->helper && strncmp(k->helper, "sparkd-probe-", 13) == 0);
                CHECK(k->metric && k->unit && k->summary && k->measure_sec);
                /* Each default lies in its own range. */
                for (const struct probe_param_spec *s = k->params; s->name; s++)
                        CHECK(s->min <= s->def && s->def <= s->max);
        }
        probe_kind_names(names, sizeof(names));
        CHECK(strncmp(names, "rtt, tcp", 8) == 0);
}

static void test_params(void)
{
        json_object *out = NULL;
        char err[256];

        CHECK(check("tcp", NULL, &out, err, sizeof(err)) == 0);
        CHECK(probe_kind_param(probe_kind_find("tcp"), out, "duration_s") == 5);
        CHECK(probe_kind_param(probe_kind_find("tcp"), out, "streams") == 1);
        CHECK(json_object_object_length(out) == 3);
        json_object_put(out);

        CHECK(check("tcp", "{\"duration_s\": 2, \"streams\": 8}", &out, err, sizeof(err)) == 0);
        CHECK(probe_kind_param(probe_kind_find("tcp"), out, "streams") == 8);
        CHECK(probe_kind_param(probe_kind_find("tcp"), out, "size") == 128 * 1024);
        json_object_put(out);

        out = NULL;
        CHECK(check("rtt", "{\"streams\": 2}", &out, err, sizeof(err)) == -EINVAL && out == NULL);
        CHECK_STREQ(err, "the rtt probe takes no \"streams\" (it takes count 1-100000, size 1-1048576, "
                         "interval_us 0-10000000)");
        CHECK(check("tcp", "{\"streams\": 65}", &out, err, sizeof(err)) == -ERANGE);
        CHECK_STREQ(err, "the tcp probe's streams is an integer from 1 to 64");
        CHECK(check("tcp", "{\"streams\": \"4\"}", &out, err, sizeof(err)) == -ERANGE);
        CHECK(check("tcp", "{\"streams\": -1}", &out, err, sizeof(err)) == -ERANGE);
        CHECK(check("tcp", "{\"streams\": 2.5}", &out, err, sizeof(err)) == -ERANGE);
        CHECK(check("tcp", "[1]", &out, err, sizeof(err)) == -EINVAL);
}

static void test_helper_args(void)
{
        const struct probe_kind *tcp = probe_kind_find("tcp");
        json_object *out = NULL;
        char storage[16][24], err[128];
        char *argv[16];
        size_t n = 0;

        CHECK(check("tcp", "{\"duration_s\": 3}", &out, err, sizeof(err)) == 0);
        CHECK(probe_kind_helper_args(tcp, out, PROBE_SIDE_CLIENT, argv, &n, ARRAY_SIZE(argv), storage) == 0);
        CHECK(n == 6);
        if (n == 6) {
                CHECK_STREQ(argv[0], "--duration");
                CHECK_STREQ(argv[1], "3");
                CHECK_STREQ(argv[2], "--streams");
                CHECK_STREQ(argv[3], "1");
                CHECK_STREQ(argv[4], "--size");
                CHECK_STREQ(argv[5], "131072");
        }
        /* The server side of tcp needs none: the client says what it sends. */
        n = 0;
        CHECK(probe_kind_helper_args(tcp, out, PROBE_SIDE_SERVER, argv, &n, ARRAY_SIZE(argv), storage) == 0);
        CHECK(n == 0);
        n = 0;
        CHECK(probe_kind_helper_args(tcp, out, PROBE_SIDE_CLIENT, argv, &n, 4, storage) == -E2BIG);
        /* The deadline covers the measurement and the set-up around it. */
        CHECK(probe_kind_deadline_sec(tcp, out) == 3 + 15);
        json_object_put(out);

        CHECK(check("rtt", "{\"count\": 100000, \"interval_us\": 1000}", &out, err, sizeof(err)) == 0);
        CHECK(probe_kind_deadline_sec(probe_kind_find("rtt"), out) == 5 + 200 + 15);
        json_object_put(out);
}

int main(void)
{
        RUN(test_table);
        RUN(test_params);
        RUN(test_helper_args);
        return test_result();
}
