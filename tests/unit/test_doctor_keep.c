/* The doctor's kept result and the status's health line made from it: how often the doctor runs
 * for many reads, after events and as time passes, with a doctor and a clock of the test's. */
#include <errno.h>

#include "daemon/fabric/doctor_keep.h"
#include "daemon/health.h"
#include "test.h"

static unsigned doctor_runs;
static const char *doctor_status = "ok";
static bool doctor_fails;
static uint64_t now;

static uint64_t test_clock(void)
{
        return now;
}

static int fake_doctor(void *userdata, json_object **out)
{
        json_object *o, *checks, *c;

        doctor_runs++;
        if (doctor_fails)
                return -EIO;
        o = json_object_new_object();
        checks = json_object_new_array();
        c = json_object_new_object();
        json_object_object_add(c, "id", json_object_new_string("mtu"));
        json_object_object_add(c, "status", json_object_new_string(doctor_status));
        json_object_object_add(c, "summary", json_object_new_string("the MTU is not 9000"));
        json_object_array_add(checks, c);
        json_object_object_add(o, "status", json_object_new_string(doctor_status));
        json_object_object_add(o, "checks", checks);
        *out = o;
        return 0;
}

static const char *health_status(json_object *line)
{
        return json_object_get_string(json_object_object_get(line, "status"));
}

/* The health line read many times runs the doctor once, and is the same line each time. */
static void test_many_reads_one_run(void)
{
        struct doctor_keep keep;
        struct fabric_api_context fabric = { .keep = doctor_keep_init(&keep, fake_doctor, NULL,
                                                                      test_clock) };
        struct health_kept kept = { 0 };
        json_object *first, *line;

        doctor_runs = 0;
        now = 1000000;
        first = health_of_node(&kept, NULL, NULL, &fabric);
        CHECK_STREQ(health_status(first), "ok");
        for (int i = 0; i < 10000; i++) {
                now += 10; /* 10,000 reads in 0.1 s */
                line = health_of_node(&kept, NULL, NULL, &fabric);
                CHECK(line == first);
                json_object_put(line);
        }
        CHECK(doctor_runs == 1);
        CHECK(doctor_keep_runs(&keep) == 1);
        json_object_put(first);
        health_kept_clear(&kept);
        doctor_keep_clear(&keep);
}

/* An event makes the result due, though not within the gap; a second makes it due without one. */
static void test_events_and_age(void)
{
        struct doctor_keep keep;
        struct fabric_api_context fabric = { .keep = doctor_keep_init(&keep, fake_doctor, NULL,
                                                                      test_clock) };
        struct health_kept kept = { 0 };
        json_object *line;

        doctor_runs = 0;
        doctor_status = "ok";
        now = 5000000;
        json_object_put(health_of_node(&kept, NULL, NULL, &fabric));
        doctor_status = "fail";
        doctor_keep_changed(&keep);
        now += DOCTOR_KEEP_MIN_GAP_USEC - 1;
        line = health_of_node(&kept, NULL, NULL, &fabric);
        CHECK(doctor_runs == 1); /* within the gap: the kept line */
        CHECK_STREQ(health_status(line), "ok");
        json_object_put(line);
        now += 1;
        line = health_of_node(&kept, NULL, NULL, &fabric);
        CHECK(doctor_runs == 2);
        CHECK_STREQ(health_status(line), "fail");
        json_object_put(line);
        for (int i = 0; i < 100; i++)
                json_object_put(health_of_node(&kept, NULL, NULL, &fabric));
        CHECK(doctor_runs == 2); /* the event was seen once */

        doctor_status = "warn";
        now += DOCTOR_KEEP_MAX_AGE_USEC - 1;
        json_object_put(health_of_node(&kept, NULL, NULL, &fabric));
        CHECK(doctor_runs == 2);
        now += 1;
        line = health_of_node(&kept, NULL, NULL, &fabric);
        CHECK(doctor_runs == 3);
        CHECK_STREQ(health_status(line), "warn");
        json_object_put(line);
        health_kept_clear(&kept);
        doctor_keep_clear(&keep);
}

/* A result made elsewhere (the doctor method) is kept and shows in the line without a run. */
static void test_put(void)
{
        struct doctor_keep keep;
        struct fabric_api_context fabric = { .keep = doctor_keep_init(&keep, fake_doctor, NULL,
                                                                      test_clock) };
        struct health_kept kept = { 0 };
        json_object *fresh = NULL, *line;

        doctor_runs = 0;
        doctor_status = "ok";
        now = 9000000;
        json_object_put(health_of_node(&kept, NULL, NULL, &fabric));
        doctor_status = "fail";
        CHECK(fake_doctor(NULL, &fresh) == 0);
        doctor_keep_put(&keep, fresh);
        json_object_put(fresh);
        line = health_of_node(&kept, NULL, NULL, &fabric);
        CHECK_STREQ(health_status(line), "fail");
        CHECK(doctor_runs == 2); /* the first read's and the one put */
        CHECK(doctor_keep_runs(&keep) == 2);
        json_object_put(line);
        health_kept_clear(&kept);
        doctor_keep_clear(&keep);
}

/* A doctor that cannot read the facts is kept as such for its second, not retried per read. */
static void test_failure_kept(void)
{
        struct doctor_keep keep;
        struct fabric_api_context fabric = { .keep = doctor_keep_init(&keep, fake_doctor, NULL,
                                                                      test_clock) };
        json_object *doctor;

        doctor_runs = 0;
        doctor_fails = true;
        now = 20000000;
        for (int i = 0; i < 100; i++) {
                doctor = fabric_api_doctor_kept(&fabric);
                CHECK(doctor == NULL);
        }
        CHECK(doctor_runs == 1);
        doctor_fails = false;
        now += DOCTOR_KEEP_MAX_AGE_USEC;
        doctor = fabric_api_doctor_kept(&fabric);
        CHECK(doctor != NULL);
        CHECK(doctor_runs == 2);
        json_object_put(doctor);
        doctor_keep_clear(&keep);
}

int main(void)
{
        RUN(test_many_reads_one_run);
        RUN(test_events_and_age);
        RUN(test_put);
        RUN(test_failure_kept);
        return test_result();
}
