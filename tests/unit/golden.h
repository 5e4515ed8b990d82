/*
 * What the golden tests share: a fixture host's facts as the daemon would gather them, and the
 * comparison of an output with its expected file (UPDATE_GOLDEN=1 rewrites it instead; read the
 * diff before committing it). The host-named forms find hosts under FIXTURES_DIR
 * (tests/fixtures/hosts/NAME, goldens in NAME/expected/).
 */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "inventory/fabric.h"
#include "test.h"

static inline char *golden_read_file(const char *path)
{
        FILE *f = fopen(path, "re");
        char *buf = NULL;
        size_t size = 0;
        FILE *mem;
        int c;

        if (!f)
                return NULL;
        mem = open_memstream(&buf, &size);
        while ((c = fgetc(f)) != EOF)
                fputc(c, mem);
        fclose(mem);
        fclose(f);
        return buf;
}

/* Compares actual with dir/name. */
static inline void golden_compare(const char *dir, const char *name, const char *actual)
{
        char path[1024];
        char *expected;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (getenv("UPDATE_GOLDEN")) {
                FILE *f;

                mkdir(dir, 0755);
                f = fopen(path, "we");
                fputs(actual, f);
                fclose(f);
                return;
        }
        expected = golden_read_file(path);
        CHECK(expected != NULL);
        if (expected && strcmp(expected, actual) != 0) {
                fprintf(stderr, "%s differs; got:\n%s\n(UPDATE_GOLDEN=1 rewrites it)\n", path, actual);
                CHECK(false);
        }
        free(expected);
}

/* The facts of the fixture host under root; patterns: what [fabric] interfaces names there, or
 * NULL. What the daemon adds from its own process and config is fixed. */
static inline int golden_load_host(const char *root, char *const *patterns, struct fabric_facts *f)
{
        char addresses[600];
        int r;

        r = fabric_facts_read(root, patterns, false, f);
        if (r < 0)
                return r;
        snprintf(addresses, sizeof(addresses), "%s/addresses", root);
        r = fabric_facts_load_addresses(f, addresses);
        if (r < 0 && r != -ENOENT)
                return r;
        f->memlock_daemon = HOSTFACTS_UNLIMITED;
        f->mtu_wanted = 9000;
        fabric_facts_add_sysctl(f, "net.core.rmem_max", "268435456", "268435456");
        fabric_facts_add_sysctl(f, "net.core.wmem_max", "268435456", "268435456");
        return 0;
}

#ifdef FIXTURES_DIR
static inline void compare_golden(const char *host, const char *name, const char *actual)
{
        char dir[512];

        snprintf(dir, sizeof(dir), "%s/%s/expected", FIXTURES_DIR, host);
        golden_compare(dir, name, actual);
}

/* patterns: what [fabric] interfaces names on that host, or NULL. */
static inline int load_host_with(const char *host, char *const *patterns, struct fabric_facts *f)
{
        char root[512];

        snprintf(root, sizeof(root), "%s/%s", FIXTURES_DIR, host);
        return golden_load_host(root, patterns, f);
}

static inline int load_host(const char *host, struct fabric_facts *f)
{
        return load_host_with(host, NULL, f);
}

/* What a report function (report_doctor, report_env_check) writes for result, with its exit code
 * appended, compared with host's golden file name; returns the exit code. */
static inline int compare_golden_report(const char *host, const char *name,
                                        int (*report)(FILE *, json_object *), json_object *result)
{
        char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);
        int code = report(out, result);

        fprintf(out, "(exit %d)\n", code);
        fclose(out);
        compare_golden(host, name, text);
        free(text);
        return code;
}
#endif
