/* The status method's health line (daemon/health.c): the worst fact of now leads, before a
 * verdict on an earlier measurement; a long summary is shortened at a word. */
#include <json-c/json.h>
#include <string.h>

#include "daemon/health.h"
#include "test.h"

static const char *str(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "(null)";
}

/* A doctor whose rail-bandwidth fails with summary, and whose other checks pass. */
static json_object *doctor_with(const char *id, const char *status, const char *summary)
{
        json_object *d = json_object_new_object(), *checks = json_object_new_array(),
                    *ok = json_object_new_object(), *c = json_object_new_object();

        json_object_object_add(ok, "id", json_object_new_string("mtu"));
        json_object_object_add(ok, "status", json_object_new_string("ok"));
        json_object_object_add(ok, "summary", json_object_new_string("every fabric netdev at MTU 9000"));
        json_object_array_add(checks, ok);
        json_object_object_add(c, "id", json_object_new_string(id));
        json_object_object_add(c, "status", json_object_new_string(status));
        json_object_object_add(c, "summary", json_object_new_string(summary));
        json_object_array_add(checks, c);
        json_object_object_add(d, "checks", checks);
        return d;
}

static json_object *link_down(void)
{
        return json_tokener_parse("[{\"name\": \"enp1s0f0np0\", \"oper_up\": false, \"keep_down\": false,"
                                  "  \"flapping\": false, \"last_change\": \"2026-11-28T12:00:00Z\","
                                  "  \"drift\": []},"
                                  " {\"name\": \"enp1s0f1np1\", \"oper_up\": true, \"keep_down\": false,"
                                  "  \"flapping\": false, \"last_change\": null, \"drift\": []}]");
}

/* A cable pulled after a probe found a rail slow: the link leads, the status stays fail. */
static void test_link_down_leads(void)
{
        json_object *links = link_down(),
                    *doctor = doctor_with("rail-bandwidth", "fail",
                                          "stale-initialization: rocep1s0f0 reverse: 12.00 Gb/s"),
                    *h = health_build(links, NULL, doctor);

        CHECK_STREQ(str(h, "status"), "fail");
        CHECK_STREQ(str(h, "first_problem"), "link enp1s0f0np0 went down at 2026-11-28T12:00:00Z");
        CHECK_STREQ(str(h, "command"), "sparkc links");
        json_object_put(h);
        json_object_put(doctor);
        /* A failing check of the node as it is now still leads over a link warning. */
        doctor = doctor_with("mtu", "fail", "enp1s0f1np1 at MTU 1500, 9000 wanted");
        h = health_build(links, NULL, doctor);
        CHECK_STREQ(str(h, "status"), "fail");
        CHECK_STREQ(str(h, "first_problem"), "mtu: enp1s0f1np1 at MTU 1500, 9000 wanted");
        json_object_put(h);
        json_object_put(doctor);
        /* Nothing of now wrong: the earlier verdict leads. */
        doctor = doctor_with("rail-bandwidth", "warn", "degraded: enp1s0f1np1 reverse: 14.44 Gb/s");
        h = health_build(NULL, NULL, doctor);
        CHECK_STREQ(str(h, "status"), "warn");
        CHECK_STREQ(str(h, "first_problem"), "rail-bandwidth: degraded: enp1s0f1np1 reverse: 14.44 Gb/s");
        json_object_put(h);
        json_object_put(doctor);
        json_object_put(links);
}

/* A summary past the line's length ends at a word with "...", never on " (" as it did. */
static void test_long_summary(void)
{
        char summary[600] = "";
        json_object *doctor, *h;
        const char *first;

        while (strlen(summary) < 280)
                strcat(summary, "enp1s0f1np1 reverse: 14.44 Gb/s; ");
        strcat(summary, "(and more, see the rails)");
        doctor = doctor_with("rail-bandwidth", "warn", summary);
        h = health_build(NULL, NULL, doctor);
        first = str(h, "first_problem");
        CHECK(strlen(first) <= HEALTH_SUMMARY_MAX);
        CHECK(strstr(first, "(") == NULL);
        CHECK(strcmp(first + strlen(first) - 3, "...") == 0);
        CHECK(first[strlen(first) - 4] != ' ' && first[strlen(first) - 4] != ';');
        json_object_put(h);
        json_object_put(doctor);
}

int main(void)
{
        RUN(test_link_down_leads);
        RUN(test_long_summary);
        return test_result();
}
