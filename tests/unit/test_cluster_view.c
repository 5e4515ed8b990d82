/* The cluster's sections made from the modules' JSON, and the links and alerts made from every
 * node's sections: pure, so checked on small documents. */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/cluster/alerts_view.h"
#include "daemon/cluster/links_view.h"
#include "daemon/cluster/result_rows.h"
#include "daemon/cluster_sections.h"
#include "test.h"

#define A "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define B "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static const char *at(json_object *o, const char *path)
{
        json_object *v = o;
        char buf[256], *save = NULL;

        snprintf(buf, sizeof(buf), "%s", path);
        for (char *k = strtok_r(buf, ".", &save); k && v; k = strtok_r(NULL, ".", &save)) {
                if (json_object_is_type(v, json_type_array))
                        v = json_object_array_get_idx(v, (size_t)atoi(k));
                else if (!json_object_object_get_ex(v, k, &v))
                        v = NULL;
        }
        return v ? json_object_get_string(v) : NULL;
}

static void test_doctor_section_keeps_the_checks_not_ok(void)
{
        json_object *doctor = json_tokener_parse(
                "{\"status\":\"warn\",\"checks\":[{\"id\":\"mtu\",\"status\":\"ok\",\"summary\":\"fine\"},"
                "{\"id\":\"memlock\",\"status\":\"warn\",\"summary\":\"low\",\"evidence\":[\"x\"]},"
                "{\"id\":\"gpu\",\"status\":\"fail\",\"summary\":\"none\"}]}");
        json_object *s = cluster_section_doctor(doctor);

        CHECK_STREQ(at(s, "verdict"), "warning");
        CHECK(json_object_array_length(json_object_object_get(s, "checks")) == 2);
        CHECK_STREQ(at(s, "checks.0.id"), "memlock");
        CHECK_STREQ(at(s, "checks.0.status"), "warning");
        CHECK_STREQ(at(s, "checks.1.status"), "failed");
        CHECK(at(s, "checks.0.evidence") == NULL);
        json_object_put(s);
        s = cluster_section_doctor(NULL);
        CHECK_STREQ(at(s, "verdict"), "unknown");
        json_object_put(s);
        json_object_put(doctor);
}

static void test_links_section_counts_the_flaps_of_the_last_hour(void)
{
        struct cluster_flap_log log = { 0 };
        json_object *links = json_tokener_parse("[{\"name\":\"p0\",\"oper_up\":true,\"mtu\":9000,"
                                                "\"speed_mbps\":200000,\"flaps_since_start\":4}]");
        json_object *s = cluster_section_links(links, &log, 0);
        const int64_t hour = 3600LL * 1000000;

        /* Flaps before the link was first seen are not dated: not counted. */
        CHECK_STREQ(at(s, "0.flaps_1h"), "0");
        CHECK_STREQ(at(s, "0.oper"), "up");
        CHECK_STREQ(at(s, "0.mtu"), "9000");
        json_object_put(s);
        json_object_object_add(json_object_array_get_idx(links, 0), "flaps_since_start",
                               json_object_new_int(7));
        json_object_object_add(json_object_array_get_idx(links, 0), "oper_up", json_object_new_boolean(0));
        s = cluster_section_links(links, &log, hour / 2);
        CHECK_STREQ(at(s, "0.flaps_1h"), "3");
        CHECK_STREQ(at(s, "0.oper"), "down");
        json_object_put(s);
        s = cluster_section_links(links, &log, hour / 2 + hour);
        CHECK_STREQ(at(s, "0.flaps_1h"), "0");
        json_object_put(s);
        json_object_put(links);
}

static void test_results_section_takes_each_direction(void)
{
        json_object *latest = json_tokener_parse(
                "[{\"peer_id\":\"" B
                "\",\"peer\":\"b\",\"kind\":\"tcp\",\"started_at\":\"2026-01-01T00:00:10Z\","
                "\"status\":\"ok\",\"measured\":{\"gbps\":9,\"directions\":[{\"direction\":\"forward\","
                "\"gbps\":9.5},"
                "{\"direction\":\"reverse\",\"gbps\":8.5}]}},"
                "{\"peer_id\":\"" B
                "\",\"peer\":\"b\",\"kind\":\"rtt\",\"started_at\":\"2026-01-01T00:00:05Z\","
                "\"status\":\"degraded\",\"measured\":{\"median_us\":40.5}}]");
        json_object *s = cluster_section_results(latest), *problems = json_object_new_array();
        json_object *probe_alerts = cluster_section_probe_alerts(latest), *alerts;

        /* By peer, then kind, not newest first: a new result changes its entry in place. */
        CHECK_STREQ(at(s, "1.gbps_out"), "9.5");
        CHECK_STREQ(at(s, "1.gbps_in"), "8.5");
        CHECK_STREQ(at(s, "1.at"), "2026-01-01T00:00:10Z");
        CHECK_STREQ(at(s, "0.rtt_median_us"), "40.5");
        CHECK_STREQ(at(s, "0.verdict"), "degraded");
        alerts = cluster_section_alerts(problems, probe_alerts);
        CHECK(json_object_array_length(alerts) == 1);
        CHECK_STREQ(at(alerts, "0.id"), "probe-degraded");
        CHECK_STREQ(at(alerts, "0.status"), "warning");
        CHECK_STREQ(at(alerts, "0.subject"), "rtt b");
        json_object_put(alerts);
        json_object_put(probe_alerts);
        json_object_put(problems);
        json_object_put(s);
        json_object_put(latest);
}

/* The links view of nodes given as cluster_nodes_to_json writes them, results as their text. */
static json_object *links_of(json_object *nodes)
{
        size_t n = json_object_array_length(nodes);
        struct links_view_node view[8];
        char *text = NULL;
        json_object *links;

        CHECK(n <= 8);
        for (size_t i = 0; i < n && i < 8; i++) {
                json_object *node = json_object_array_get_idx(nodes, i), *sections = NULL;

                json_object_object_get_ex(node, "sections", &sections);
                view[i] = (struct links_view_node){
                        .node_id = json_object_get_string(json_object_object_get(node, "node_id")),
                        .name = json_object_get_string(json_object_object_get(node, "name")),
                        .is_stale = json_object_get_boolean(json_object_object_get(node, "stale")),
                };
                view[i].results =
                        json_object_to_json_string_length(json_object_object_get(sections, "results"),
                                                          JSON_C_TO_STRING_PLAIN, &view[i].results_len);
        }
        CHECK(links_view_text(view, n < 8 ? n : 8, &text) == 0);
        links = text ? json_tokener_parse(text) : NULL;
        CHECK(links != NULL);
        free(text);
        return links;
}

static void test_links_join_both_ends_and_keep_the_newest(void)
{
        /* a measured tcp to b (both ways) at 10 s; b measured tcp to a at 20 s: b's result is the
         * newest for both directions. rtt only from a. */
        json_object *nodes = json_tokener_parse(
                "[{\"node_id\":\"" A "\",\"name\":\"a\",\"stale\":false,\"sections\":{\"results\":["
                "{\"peer_id\":\"" B "\",\"peer\":\"b\",\"kind\":\"tcp\",\"at\":\"T10\",\"verdict\":\"ok\","
                "\"gbps_out\":1,\"gbps_in\":2},"
                "{\"peer_id\":\"" B "\",\"peer\":\"b\",\"kind\":\"rtt\",\"at\":\"T10\",\"verdict\":\"ok\","
                "\"rtt_median_us\":5}],"
                "\"alerts\":[{\"id\":\"link-down\",\"status\":\"warning\",\"subject\":\"p0\",\"summary\":"
                "\"s1\","
                "\"since\":\"T05\"}]}},"
                "{\"node_id\":\"" B "\",\"name\":\"b\",\"stale\":true,\"sections\":{\"results\":["
                "{\"peer_id\":\"" A
                "\",\"peer\":\"a\",\"kind\":\"tcp\",\"at\":\"T20\",\"verdict\":\"degraded\","
                "\"gbps_out\":3,\"gbps_in\":4}],"
                "\"alerts\":[{\"id\":\"peer-down\",\"status\":\"warning\",\"subject\":\"a\",\"summary\":"
                "\"s2\","
                "\"since\":\"T07\"},{\"id\":\"x\",\"status\":\"failed\",\"subject\":\"y\",\"summary\":"
                "\"s3\"}]}}]");
        json_object *links = links_of(nodes), *alerts = alerts_view(nodes);

        CHECK(json_object_array_length(links) == 1);
        CHECK_STREQ(at(links, "0.a.name"), "a");
        CHECK_STREQ(at(links, "0.b.name"), "b");
        CHECK_STREQ(at(links, "0.kinds.0.kind"), "rtt");
        CHECK_STREQ(at(links, "0.kinds.0.a_to_b.value"), "5");
        CHECK(at(links, "0.kinds.0.b_to_a") == NULL);
        CHECK_STREQ(at(links, "0.kinds.1.kind"), "tcp");
        /* b's gbps_out runs from b to a. */
        CHECK_STREQ(at(links, "0.kinds.1.b_to_a.value"), "3");
        CHECK_STREQ(at(links, "0.kinds.1.a_to_b.value"), "4");
        CHECK_STREQ(at(links, "0.kinds.1.a_to_b.measured_by"), "b");
        CHECK_STREQ(at(links, "0.kinds.1.a_to_b.verdict"), "degraded");
        /* b is stale: what it measured says so. */
        CHECK_STREQ(at(links, "0.kinds.1.a_to_b.stale"), "true");
        CHECK_STREQ(at(links, "0.kinds.0.a_to_b.stale"), "false");

        CHECK(json_object_array_length(alerts) == 3);
        CHECK_STREQ(at(alerts, "0.summary"), "s2");
        CHECK_STREQ(at(alerts, "0.name"), "b");
        CHECK_STREQ(at(alerts, "0.stale"), "true");
        CHECK_STREQ(at(alerts, "1.summary"), "s1");
        /* Without a time: last. */
        CHECK_STREQ(at(alerts, "2.summary"), "s3");
        json_object_put(links);
        json_object_put(alerts);
        json_object_put(nodes);
}

/* The view is written as text: names with characters JSON escapes come out as json-c writes
 * them and read back the same; at equal times the end first in name order is shown, both ways;
 * a peer no summary names is named by the result. */
static void test_links_text_escapes_and_ties(void)
{
        const char *a_results = "[{\"peer_id\":\"" B "\",\"peer\":\"?\",\"kind\":\"tcp\",\"at\":\"T5\","
                                "\"verdict\":\"ok\",\"gbps_out\":1,\"gbps_in\":2},"
                                "{\"peer_id\":\"cccccccccccccccccccccccccccccccc\",\"peer\":\"c\\u0001/\","
                                "\"kind\":\"rtt\",\"at\":\"T1\",\"rtt_median_us\":9}]";
        const char *b_results = "[{\"peer_id\":\"" A "\",\"kind\":\"tcp\",\"at\":\"T5\","
                                "\"verdict\":\"degraded\",\"gbps_out\":3,\"gbps_in\":4}]";
        struct links_view_node nodes[] = {
                { .node_id = A, .name = "x/1", .results = a_results, .results_len = strlen(a_results) },
                { .node_id = B, .name = "y\"2", .results = b_results, .results_len = strlen(b_results) },
        };
        char *text = NULL;
        json_object *links;

        CHECK(links_view_text(nodes, 2, &text) == 0);
        CHECK(text && strstr(text, "\"name\":\"x\\/1\"") != NULL);
        CHECK(text && strstr(text, "\"name\":\"c\\u0001\\/\"") != NULL);
        links = text ? json_tokener_parse(text) : NULL;
        CHECK(json_object_array_length(links) == 2);
        /* In name order: "c\x01/" before "x/1", "x/1" before "y\"2". */
        CHECK_STREQ(at(links, "0.a.name"), "c\x01/");
        CHECK_STREQ(at(links, "0.b.name"), "x/1");
        CHECK_STREQ(at(links, "0.kinds.0.b_to_a.value"), "9");
        CHECK_STREQ(at(links, "0.kinds.0.b_to_a.verdict"), "?");
        CHECK_STREQ(at(links, "1.b.name"), "y\"2");
        CHECK_STREQ(at(links, "1.kinds.0.a_to_b.value"), "1");
        CHECK_STREQ(at(links, "1.kinds.0.b_to_a.value"), "2");
        CHECK_STREQ(at(links, "1.kinds.0.b_to_a.measured_by"), "x/1");
        json_object_put(links);
        free(text);
        /* No node: an empty list. */
        CHECK(links_view_text(NULL, 0, &text) == 0);
        CHECK_STREQ(text, "[]");
        free(text);
}

/* Rows are read from the results' text in place: a number keeps its own digits, an escaped
 * string is decoded, unknown members are skipped, the last of a repeated member counts, and
 * results that cannot be rows are left out. */
static const char *value_text(const char *value)
{
        static char buf[64];
        FILE *f = fmemopen(buf, sizeof(buf), "w");

        CHECK(f != NULL);
        if (!f)
                return NULL;
        result_row_value_write(f, value);
        fclose(f);
        return buf;
}

static void test_rows_read_from_the_text(void)
{
        const char *text =
                "[{\"peer_id\":\"" B "\",\"peer\":\"b\\u0031\",\"kind\":\"tcp\",\"at\":\"T1\","
                "\"verdict\":\"ok\",\"gbps_out\":12.30,\"gbps_in\":7,\"future\":{\"x\":[1,\"]\"]}},"
                "{\"peer_id\":\"" B "\",\"kind\":\"unknown-kind\",\"at\":\"T1\"},"
                "{\"peer_id\":\"" B B "\",\"kind\":\"rtt\",\"rtt_median_us\":5},"
                "{\"peer_id\":7,\"kind\":\"rtt\"},"
                "{\"kind\":\"rtt\",\"rtt_median_us\":5},"
                "\"not a result\","
                "{\"peer_id\":\"" B "\",\"kind\":\"rtt\",\"rtt_median_us\":null,\"peer\":3,"
                "\"verdict\":\"ok\",\"verdict\":\"degraded\"}]";
        struct result_rows rows;

        CHECK(result_rows_read(text, strlen(text), &rows) == 0);
        /* The tcp row and the rtt row whose value is null (no value, still a row). */
        CHECK(rows.n == 2);
        if (rows.n == 2) {
                CHECK_STREQ(rows.v[0].kind, "tcp");
                CHECK_STREQ(rows.v[0].peer_id, B);
                CHECK_STREQ(rows.v[0].peer, "b1");
                CHECK_STREQ(rows.v[0].at, "T1");
                CHECK_STREQ(rows.v[0].verdict, "ok");
                CHECK_STREQ(rows.v[1].kind, "rtt");
                /* Not a string where one is optional: as if absent. */
                CHECK_STREQ(rows.v[1].peer, "");
                CHECK_STREQ(rows.v[1].verdict, "degraded");
                CHECK_STREQ(rows.v[0].out, "12.30");
                CHECK_STREQ(rows.v[0].in, "7");
                CHECK_STREQ(rows.v[1].out, "");
                CHECK_STREQ(rows.v[1].in, "");
                CHECK_STREQ(value_text(rows.v[0].out), "12.30");
                CHECK_STREQ(value_text(rows.v[0].in), "7");
                CHECK_STREQ(value_text(rows.v[1].out), "null");
        }
        result_rows_free(&rows);
        /* Nothing, not an array, or cut short: no rows, no error. */
        CHECK(result_rows_read(NULL, 0, &rows) == 0 && rows.n == 0);
        CHECK(result_rows_read("{}", 2, &rows) == 0 && rows.n == 0);
        CHECK(result_rows_read("[]", 2, &rows) == 0 && rows.n == 0);
        CHECK(result_rows_read(text, strlen(text) / 3, &rows) == 0);
        CHECK(rows.n <= 1);
        result_rows_free(&rows);
}

int main(void)
{
        RUN(test_doctor_section_keeps_the_checks_not_ok);
        RUN(test_links_section_counts_the_flaps_of_the_last_hour);
        RUN(test_results_section_takes_each_direction);
        RUN(test_links_join_both_ends_and_keep_the_newest);
        RUN(test_links_text_escapes_and_ties);
        RUN(test_rows_read_from_the_text);
        return test_result();
}
