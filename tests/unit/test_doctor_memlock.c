/*
 * The doctor's memlock fix names the limit that is actually low and the line that sets it: never a
 * line that is already there (limits.conf's hard limit already unlimited, the unit's
 * LimitMEMLOCK=infinity already set), from the fixtures and from unit files in a scratch host root.
 */
#include <stdlib.h>
#include <unistd.h>

#include "daemon/fabric/doctor.h"
#include "golden.h"
#include "inventory/memlock_unit.h"

static char *memlock_fix(const struct fabric_facts *f)
{
        json_object *doctor = doctor_run(f), *checks, *v;
        char *fix = NULL;

        json_object_object_get_ex(doctor, "checks", &checks);
        for (size_t i = 0; checks && i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i);

                if (json_object_object_get_ex(c, "id", &v) &&
                    strcmp(json_object_get_string(v), "memlock") == 0 &&
                    json_object_object_get_ex(c, "fix", &v) && v)
                        fix = strdup(json_object_get_string(v));
        }
        json_object_put(doctor);
        return fix ? fix : strdup("");
}

/* gb10-open-driver: '* hard memlock unlimited' is in limits.conf, the soft line is 8192 KiB. The
 * fix used to ask to add both lines. */
static void test_login_hard_already_there(void)
{
        struct fabric_facts f;
        char *fix;

        CHECK(load_host("gb10-open-driver", &f) == 0);
        fix = memlock_fix(&f);
        CHECK_STREQ(fix, "for login sessions: change /etc/security/limits.conf:2 (soft 8192 KiB) to '* soft "
                         "memlock unlimited' and log in again");
        CHECK(strstr(fix, "hard memlock") == NULL);
        free(fix);
        fabric_facts_free(&f);
}

static void write_file(const char *root, const char *path, const char *text)
{
        char full[256], dir[320];
        FILE *out;

        snprintf(full, sizeof(full), "%s/%s", root, path);
        snprintf(dir, sizeof(dir), "mkdir -p \"$(dirname '%s')\"", full);
        CHECK(system(dir) == 0);
        out = fopen(full, "we");
        CHECK(out != NULL);
        if (out) {
                fputs(text, out);
                fclose(out);
        }
}

/* spark-twins: login sessions unlimited through limits.d; sparkd runs at 8 MiB under systemd. */
static void test_daemon_unit(void)
{
        char root[] = "/tmp/sparkd-memlock-XXXXXX", rm[64];
        struct fabric_facts f;
        char *fix;

        CHECK(mkdtemp(root) != NULL);
        CHECK(load_host("spark-twins", &f) == 0);
        f.memlock_daemon = 8192 * 1024;
        f.is_daemon_under_systemd = true;

        /* The packaged unit already has infinity: systemd has not applied it yet. */
        write_file(root, "lib/systemd/system/sparkd.service", "[Service]\nLimitMEMLOCK=infinity\n");
        CHECK(memlock_read_unit(root, &f.host) == 0);
        fix = memlock_fix(&f);
        CHECK_STREQ(fix,
                    "for sparkd: its unit already sets LimitMEMLOCK=infinity (/lib/systemd/system/"
                    "sparkd.service:2), but systemd has not applied it to the running sparkd: systemctl "
                    "daemon-reload and systemctl restart sparkd (`systemctl show sparkd -p LimitMEMLOCK` "
                    "shows what systemd applies)");
        CHECK(strstr(fix, "limits.d") == NULL);
        free(fix);

        /* A drop-in sorted later sets it low again: that line is named. */
        write_file(root, "etc/systemd/system/sparkd.service.d/override.conf",
                   "[Service]\n\nLimitMEMLOCK=8M\n");
        write_file(root, "lib/systemd/system/sparkd.service.d/10-vendor.conf",
                   "[Service]\nLimitMEMLOCK=64M\n");
        CHECK(memlock_read_unit(root, &f.host) == 0);
        CHECK(f.host.memlock_unit == 8ULL << 20);
        fix = memlock_fix(&f);
        CHECK_STREQ(fix,
                    "for sparkd: LimitMEMLOCK at /etc/systemd/system/sparkd.service.d/override.conf:3 keeps "
                    "it at 8192 KiB: make it LimitMEMLOCK=infinity there, then systemctl daemon-reload and "
                    "systemctl restart sparkd");
        free(fix);
        fabric_facts_free(&f);
        snprintf(rm, sizeof(rm), "rm -rf '%s'", root);
        CHECK(system(rm) == 0);
}

static void test_parse_unit_value(void)
{
        uint64_t v;

        CHECK(memlock_parse_unit_value("infinity", &v) == 0 && v == HOSTFACTS_UNLIMITED);
        CHECK(memlock_parse_unit_value("64M", &v) == 0 && v == 64ULL << 20);
        CHECK(memlock_parse_unit_value("8388608:infinity", &v) == 0 && v == 8ULL << 20);
        CHECK(memlock_parse_unit_value("lots", &v) == -EINVAL);
}

int main(void)
{
        RUN(test_login_hard_already_there);
        RUN(test_daemon_unit);
        RUN(test_parse_unit_value);
        return test_result();
}
