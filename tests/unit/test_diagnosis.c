/* The classifier over recorded result sets and the fixture hosts' rails, and its episodes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/fabric/diagnosis.h"
#include "daemon/fabric/doctor.h"
#include "inventory/fabric.h"
#include "test.h"

static const struct diagnosis_thresholds defaults = { .healthy_gbps = 80,
                                                      .stale_min_gbps = 8,
                                                      .stale_max_gbps = 25 };

static json_object *load_result(const char *name)
{
        char path[512];

        snprintf(path, sizeof(path), "%s/../diagnosis/%s", FIXTURES_DIR, name);
        return json_object_from_file(path);
}

static const struct diagnosis_thresholds tcp_4_streams = {
        .healthy_gbps = 80, .stale_min_gbps = 8, .stale_max_gbps = 25, .stale_tcp_streams = 4
};

/* result_name judged on host's facts by t; streams (a JSON number) replaces the result's, and a
 * single stream's reverse figure is the 14.44 Gb/s the field saw. */
static json_object *classify_with(const char *result_name, const char *host,
                                  const struct diagnosis_thresholds *t, const char *streams)
{
        struct fabric_facts f;
        char root[512];
        json_object *result = load_result(result_name), *d;

        CHECK(result != NULL);
        if (streams) {
                json_object *dirs = json_object_object_get(result, "directions"),
                            *rev = json_object_array_get_idx(dirs, 1),
                            *rail = json_object_array_get_idx(json_object_object_get(rev, "rails"), 0);

                json_object_object_add(result, "streams", json_object_new_int(atoi(streams)));
                json_object_object_add(rev, "gbps", json_object_new_double(14.44));
                json_object_object_add(rail, "gbps", json_object_new_double(14.44));
        }
        snprintf(root, sizeof(root), "%s/%s", FIXTURES_DIR, host);
        CHECK(fabric_facts_read(root, NULL, false, &f) == 0);
        d = diagnosis_classify(result, &f, t);
        fabric_facts_free(&f);
        json_object_put(result);
        CHECK(d != NULL);
        return d;
}

static json_object *classify(const char *result_name, const char *host)
{
        struct fabric_facts f;
        char root[512];
        json_object *result = load_result(result_name), *d;

        CHECK(result != NULL);
        snprintf(root, sizeof(root), "%s/%s", FIXTURES_DIR, host);
        CHECK(fabric_facts_read(root, NULL, false, &f) == 0);
        d = diagnosis_classify(result, &f, &defaults);
        fabric_facts_free(&f);
        json_object_put(result);
        CHECK(d != NULL);
        return d;
}

static const char *str(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "(none)";
}

/* The verdict of rail `rail` in `direction`. */
static const char *rail_verdict(json_object *d, const char *rail, const char *direction)
{
        json_object *rails;

        if (!json_object_object_get_ex(d, "rails", &rails))
                return "(no rails)";
        for (size_t i = 0; i < json_object_array_length(rails); i++) {
                json_object *r = json_object_array_get_idx(rails, i);

                if (strcmp(str(r, "rail"), rail) == 0 && strcmp(str(r, "direction"), direction) == 0)
                        return str(r, "verdict");
        }
        return "(missing)";
}

static size_t n_rails(json_object *d)
{
        json_object *rails;

        return json_object_object_get_ex(d, "rails", &rails) ? json_object_array_length(rails) : 0;
}

static void test_healthy(void)
{
        json_object *d = classify("rdma-healthy.json", "spark-twins");

        CHECK_STREQ(str(d, "verdict"), "ok");
        CHECK(n_rails(d) == 4);
        CHECK_STREQ(rail_verdict(d, "rocep1s0f1", "forward"), "ok");
        CHECK_STREQ(rail_verdict(d, "roceP2p1s0f1", "reverse"), "ok");
        CHECK(!json_object_object_get_ex(d, "recovery", NULL));
        CHECK(strstr(str(d, "summary"), "ok: 4 rail directions") != NULL);
        json_object_put(d);
}

static void test_stale(void)
{
        json_object *d = classify("rdma-stale.json", "spark-twins"), *steps, *rails, *r;

        CHECK_STREQ(str(d, "verdict"), "stale-initialization");
        CHECK_STREQ(rail_verdict(d, "rocep1s0f1", "forward"), "stale-initialization");
        CHECK_STREQ(rail_verdict(d, "rocep1s0f1", "reverse"), "stale-initialization");
        CHECK_STREQ(rail_verdict(d, "roceP2p1s0f1", "forward"), "ok");
        CHECK(json_object_object_get_ex(d, "recovery", &steps) && json_object_array_length(steps) == 3);
        CHECK(strstr(json_object_get_string(json_object_array_get_idx(steps, 1)), "60 s") != NULL);
        /* The evidence: the links' state next to the number. */
        CHECK(json_object_object_get_ex(d, "rails", &rails));
        r = json_object_array_get_idx(rails, 0);
        CHECK_STREQ(str(r, "pcie"), "32 GT/s x4");
        CHECK_STREQ(str(r, "ethernet_gbps"), "200");
        CHECK(strstr(str(r, "summary"), "12.00 Gb/s") && strstr(str(r, "summary"), "Ethernet at 200 Gb/s"));
        CHECK(strncmp(str(d, "summary"), "stale-initialization: rocep1s0f1 forward", 40) == 0);
        json_object_put(d);
}

/* 12 Gb/s is in the stale band, but a link below its maximum explains it: degraded. */
static void test_bad_links_are_degraded(void)
{
        json_object *d = classify("rdma-bad-links.json", "spark-rail-faults"), *rails;

        CHECK_STREQ(str(d, "verdict"), "degraded");
        CHECK_STREQ(rail_verdict(d, "mlx5_1", "forward"), "degraded");
        CHECK_STREQ(rail_verdict(d, "mlx5_3", "reverse"), "degraded");
        CHECK(!json_object_object_get_ex(d, "recovery", NULL));
        CHECK(json_object_object_get_ex(d, "rails", &rails));
        CHECK(strstr(str(json_object_array_get_idx(rails, 0), "summary"),
                     "PCIe at 32 GT/s x2 of 32 GT/s x4"));
        CHECK(strstr(str(json_object_array_get_idx(rails, 1), "summary"), "Ethernet at 100 Gb/s"));
        json_object_put(d);
}

static void test_one_direction(void)
{
        json_object *d = classify("rdma-one-direction.json", "spark-twins");

        CHECK_STREQ(str(d, "verdict"), "stale-initialization");
        CHECK_STREQ(rail_verdict(d, "rocep1s0f1", "forward"), "ok");
        CHECK_STREQ(rail_verdict(d, "rocep1s0f1", "reverse"), "stale-initialization");
        json_object_put(d);

        /* The tcp helper's shape: rails are netdevs. Four streams configured as enough. */
        d = classify_with("tcp-one-direction.json", "spark-twins", &tcp_4_streams, NULL);
        CHECK_STREQ(str(d, "verdict"), "stale-initialization");
        CHECK_STREQ(rail_verdict(d, "enp1s0f1np1", "forward"), "ok");
        CHECK_STREQ(rail_verdict(d, "enp1s0f1np1", "reverse"), "stale-initialization");
        CHECK(strstr(str(d, "summary"), "reverse: 14.20 Gb/s from 192.168.177.12 to 192.168.177.11") !=
              NULL);
        json_object_put(d);
}

/* The status of check id in the doctor of spark-twins with diagnosis d as its newest probe. */
static char *doctor_status(json_object *d, const char *id, char **summary)
{
        struct fabric_facts f;
        char root[512], *status = strdup("(missing)");
        json_object *doctor, *checks, *entry = json_object_new_object();

        snprintf(root, sizeof(root), "%s/spark-twins", FIXTURES_DIR);
        CHECK(fabric_facts_read(root, NULL, false, &f) == 0);
        json_object_object_add(entry, "peer", json_object_new_string("spark2"));
        json_object_object_add(entry, "kind", json_object_new_string("tcp"));
        json_object_object_add(entry, "started_at", json_object_new_string("2026-11-28T12:00:00Z"));
        json_object_object_add(entry, "diagnosis", json_object_get(d));
        f.rail_verdicts = json_object_new_array();
        json_object_array_add(f.rail_verdicts, entry);
        doctor = doctor_run(&f);
        *summary = strdup("");
        CHECK(json_object_object_get_ex(doctor, "checks", &checks));
        for (size_t i = 0; checks && i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i);

                if (strcmp(str(c, "id"), id) != 0)
                        continue;
                free(status);
                free(*summary);
                status = strdup(str(c, "status"));
                *summary = strdup(str(c, "summary"));
        }
        json_object_put(doctor);
        fabric_facts_free(&f);
        return status;
}

/* One scheduled single-stream tcp probe at 14.44 Gb/s on a healthy-looking Spark rail: the band
 * is RDMA's, so the figure is degraded at most, names no power cycle, and the doctor warns. */
static void test_tcp_figure_is_not_evidence(void)
{
        json_object *d;
        char *status, *summary;

        d = classify_with("tcp-one-direction.json", "spark-twins", &defaults, "1");
        CHECK_STREQ(str(d, "verdict"), "degraded");
        CHECK_STREQ(rail_verdict(d, "enp1s0f1np1", "reverse"), "degraded");
        CHECK(!json_object_object_get_ex(d, "recovery", NULL));
        CHECK(strstr(str(d, "summary"), "AC") == NULL && strstr(str(d, "summary"), "power") == NULL);
        CHECK(strstr(str(d, "summary"), "14.44 Gb/s") != NULL);
        CHECK(strstr(str(d, "summary"), "a tcp figure of 1 stream cannot show the stale initialization") !=
              NULL);
        status = doctor_status(d, "rail-bandwidth", &summary);
        CHECK_STREQ(status, "warn");
        CHECK(strstr(summary, "AC") == NULL);
        free(status);
        free(summary);
        json_object_put(d);
        /* The helper's default of four streams is no more evidence unless configured. */
        d = classify_with("tcp-one-direction.json", "spark-twins", &defaults, NULL);
        CHECK_STREQ(str(d, "verdict"), "degraded");
        json_object_put(d);
        /* Configured, a result of fewer streams than asked still is not. */
        d = classify_with("tcp-one-direction.json", "spark-twins", &tcp_4_streams, "1");
        CHECK_STREQ(str(d, "verdict"), "degraded");
        json_object_put(d);
        /* The RDMA figure is the evidence: the doctor fails with the recovery. */
        d = classify("rdma-stale.json", "spark-twins");
        status = doctor_status(d, "rail-bandwidth", &summary);
        CHECK_STREQ(status, "fail");
        free(status);
        free(summary);
        json_object_put(d);
}

static void test_edges(void)
{
        json_object *result = load_result("rdma-stale.json"), *d, *dirs, *rail,
                    *empty = json_object_new_object();
        struct diagnosis_thresholds t = defaults;

        /* No facts: nothing is known to be a rail, so nothing is judged. */
        CHECK(diagnosis_classify(result, NULL, &defaults) == NULL);
        /* Below the band: another fault than the stale state. */
        t.stale_min_gbps = 13;
        {
                struct fabric_facts f;
                char root[512];

                snprintf(root, sizeof(root), "%s/spark-twins", FIXTURES_DIR);
                CHECK(fabric_facts_read(root, NULL, false, &f) == 0);
                d = diagnosis_classify(result, &f, &t);
                CHECK_STREQ(rail_verdict(d, "rocep1s0f1", "forward"), "degraded");
                json_object_put(d);
                /* The healthy line is configurable: at 97, roceP2p1s0f1's 96.1 Gb/s is degraded. */
                t = defaults;
                t.healthy_gbps = 97;
                d = diagnosis_classify(result, &f, &t);
                CHECK_STREQ(rail_verdict(d, "roceP2p1s0f1", "forward"), "degraded");
                json_object_put(d);
                fabric_facts_free(&f);
        }
        /* A result without directions (nccl, rtt) has no diagnosis. */
        CHECK(diagnosis_classify(empty, NULL, &defaults) == NULL);
        json_object_put(empty);
        /* A direction without rails has nothing to judge; a rail without a number or one this
         * node does not know is skipped. */
        CHECK(json_object_object_get_ex(result, "directions", &dirs));
        json_object_object_del(json_object_array_get_idx(dirs, 0), "rails");
        rail = json_object_array_get_idx(json_object_object_get(json_object_array_get_idx(dirs, 1), "rails"),
                                         0);
        json_object_object_del(rail, "gbps");
        rail = json_object_array_get_idx(json_object_object_get(json_object_array_get_idx(dirs, 1), "rails"),
                                         1);
        json_object_object_add(rail, "name", json_object_new_string("veth0"));
        json_object_object_add(rail, "netdev", json_object_new_string("veth0"));
        {
                struct fabric_facts f;
                char root[512];

                snprintf(root, sizeof(root), "%s/spark-twins", FIXTURES_DIR);
                CHECK(fabric_facts_read(root, NULL, false, &f) == 0);
                CHECK(diagnosis_classify(result, &f, &defaults) == NULL);
                fabric_facts_free(&f);
        }
        json_object_put(result);
}

static void test_episodes(void)
{
        struct diagnosis_episodes *e;

        CHECK(diagnosis_episodes_new(&e) == 0);
        CHECK(diagnosis_episode_begins(e, "p1", "rocep1s0f1", "reverse", DIAGNOSIS_STALE_INITIALIZATION));
        /* Still stale, or degraded in between: the same episode, no second alert. */
        CHECK(!diagnosis_episode_begins(e, "p1", "rocep1s0f1", "reverse", DIAGNOSIS_STALE_INITIALIZATION));
        CHECK(!diagnosis_episode_begins(e, "p1", "rocep1s0f1", "reverse", DIAGNOSIS_DEGRADED));
        CHECK(!diagnosis_episode_begins(e, "p1", "rocep1s0f1", "reverse", DIAGNOSIS_STALE_INITIALIZATION));
        /* Another direction, rail or peer is another episode. */
        CHECK(diagnosis_episode_begins(e, "p1", "rocep1s0f1", "forward", DIAGNOSIS_STALE_INITIALIZATION));
        CHECK(diagnosis_episode_begins(e, "p2", "rocep1s0f1", "reverse", DIAGNOSIS_STALE_INITIALIZATION));
        /* Healthy again ends it; the next stale result begins a new one. */
        CHECK(!diagnosis_episode_begins(e, "p1", "rocep1s0f1", "reverse", DIAGNOSIS_OK));
        CHECK(diagnosis_episode_begins(e, "p1", "rocep1s0f1", "reverse", DIAGNOSIS_STALE_INITIALIZATION));
        CHECK(!diagnosis_episode_begins(e, "p1", "rocep1s0f1", "forward", DIAGNOSIS_STALE_INITIALIZATION));
        diagnosis_episodes_free(e);
}

int main(void)
{
        RUN(test_healthy);
        RUN(test_stale);
        RUN(test_bad_links_are_degraded);
        RUN(test_one_direction);
        RUN(test_edges);
        RUN(test_tcp_figure_is_not_evidence);
        RUN(test_episodes);
        return test_result();
}
