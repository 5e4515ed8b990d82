/*
 * What the golden tests share: a fixture host's facts as the daemon would gather them, and the
 * comparison of an output with its expected file (UPDATE_GOLDEN=1 rewrites it instead; read the
 * diff before committing it). The host-named forms find hosts under FIXTURES_DIR
 * (tests/fixtures/hosts/NAME, goldens in NAME/expected/).
 */
#pragma once

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "common/json_get.h"
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

/* The first place where expected and actual differ, as a path from the top (".links[2].a.port")
 * with both values there, written into out; false when they are equal. */
static inline bool golden_json_diff(json_object *expected, json_object *actual, const char *path, char *out,
                                    size_t size)
{
        char sub[512];

        if (json_object_equal(expected, actual))
                return false;
        if (json_object_is_type(expected, json_type_object) &&
            json_object_is_type(actual, json_type_object)) {
                json_object_object_foreach(expected, key, value) {
                        json_object *other = NULL;

                        snprintf(sub, sizeof(sub), "%s.%s", path, key);
                        if (!json_object_object_get_ex(actual, key, &other)) {
                                snprintf(out, size, "%s: expected %s, absent", sub,
                                         json_object_to_json_string_ext(value, JSON_C_TO_STRING_PLAIN));
                                return true;
                        }
                        if (golden_json_diff(value, other, sub, out, size))
                                return true;
                }
                json_object_object_foreach(actual, key2, value2) {
                        if (!json_object_object_get_ex(expected, key2, NULL)) {
                                snprintf(out, size, "%s.%s: not expected, got %s", path, key2,
                                         json_object_to_json_string_ext(value2, JSON_C_TO_STRING_PLAIN));
                                return true;
                        }
                }
        }
        if (json_object_is_type(expected, json_type_array) && json_object_is_type(actual, json_type_array)) {
                size_t n = json_object_array_length(expected), m = json_object_array_length(actual);

                for (size_t i = 0; i < n && i < m; i++) {
                        snprintf(sub, sizeof(sub), "%s[%zu]", path, i);
                        if (golden_json_diff(json_object_array_get_idx(expected, i),
                                             json_object_array_get_idx(actual, i), sub, out, size))
                                return true;
                }
                if (n != m) {
                        snprintf(out, size, "%s: expected %zu items, got %zu", path[0] ? path : ".", n, m);
                        return true;
                }
        }
        snprintf(out, size, "%s: expected %s", path[0] ? path : ".",
                 json_object_to_json_string_ext(expected, JSON_C_TO_STRING_PLAIN));
        snprintf(out + strlen(out), size - strlen(out), ", got %s",
                 json_object_to_json_string_ext(actual, JSON_C_TO_STRING_PLAIN));
        return true;
}

/* Compares the JSON value actual with the one in dir/name: values, not text, so that the
 * spacing of one json-c release or another is no difference. UPDATE_GOLDEN=1 writes it as
 * json_pretty_text does, the same text with every json-c. */
static inline void golden_compare_json(const char *dir, const char *name, json_object *actual)
{
        char path[1024], diff[2048];
        char *text = json_pretty_text(actual, JSON_C_TO_STRING_SPACED);
        json_object *expected;

        CHECK(text != NULL);
        if (!text)
                return;
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (getenv("UPDATE_GOLDEN")) {
                FILE *f;

                mkdir(dir, 0755);
                f = fopen(path, "we");
                fprintf(f, "%s\n", text);
                fclose(f);
                free(text);
                return;
        }
        expected = json_object_from_file(path);
        CHECK(expected != NULL);
        if (!expected)
                fprintf(stderr, "%s: not read as JSON: %s\n", path, json_util_get_last_err());
        else if (golden_json_diff(expected, actual, "", diff, sizeof(diff))) {
                fprintf(stderr, "%s differs at %s; got:\n%s\n(UPDATE_GOLDEN=1 rewrites it)\n", path, diff,
                        text);
                CHECK(false);
        }
        json_object_put(expected);
        free(text);
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
        /* The fixture hosts are Sparks (arm64), their NCCL libraries AArch64's, whatever this
         * build's machine. */
        f->daemon_machine = (struct elf_machine){ EM_AARCH64, ELFCLASS64, ELFDATA2LSB };
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
