/* The machine an NCCL library is built for (inventory/elf_machine.c) against the daemon's, and
 * the doctor's nccl check over it: the nccl-build-a fixture's library is a real x86-64 shared
 * object (tests/fixtures/nccl-builds/make-trees.sh), the Spark fixtures' are AArch64 ELF headers
 * (make-heads.py). An arm64 sparkd must fail an x86-64 libnccl.so.2, naming both. */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/fabric/doctor.h"
#include "inventory/elf_machine.h"
#include "inventory/fabric.h"
#include "test.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must name tests/fixtures/hosts (meson passes it)"
#endif

static const struct elf_machine aarch64 = { EM_AARCH64, ELFCLASS64, ELFDATA2LSB };
static const struct elf_machine x86_64 = { EM_X86_64, ELFCLASS64, ELFDATA2LSB };

static const char *field(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v)
                       ? json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN)
                       : "";
}

/* The doctor's nccl check on the facts of root, as a daemon built for self reads them. */
static json_object *nccl_check(const char *root, struct elf_machine self)
{
        struct fabric_facts f;
        json_object *result, *checks, *found = NULL;

        CHECK(fabric_facts_read(root, NULL, false, &f) == 0);
        f.daemon_machine = self;
        result = doctor_run(&f);
        json_object_object_get_ex(result, "checks", &checks);
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i);

                if (strcmp(field(c, "id"), "\"nccl\"") == 0)
                        found = json_object_get(c);
        }
        json_object_put(result);
        fabric_facts_free(&f);
        CHECK(found != NULL);
        return found;
}

static void test_machine_of_files(void)
{
        struct elf_machine m;
        char name[64];

        CHECK(elf_machine_read(FIXTURES_DIR "/nccl-build-a/usr/lib/aarch64-linux-gnu/libnccl.so.2", &m) ==
              0);
        CHECK(elf_machine_equal(&m, &x86_64));
        CHECK_STREQ(elf_machine_name(&m, name, sizeof(name)), "x86-64");
        CHECK(elf_machine_read(FIXTURES_DIR
                               "/spark-twins/usr/local/cuda/targets/sbsa-linux/lib/libnccl.so.2",
                               &m) == 0);
        CHECK(elf_machine_equal(&m, &aarch64));
        CHECK_STREQ(elf_machine_name(&m, name, sizeof(name)), "AArch64");
        CHECK(elf_machine_read(FIXTURES_DIR "/spark-twins/etc/security/limits.conf", &m) == -EBADMSG);
        CHECK(elf_machine_read(FIXTURES_DIR "/spark-twins/usr", &m) == -EINVAL);
        CHECK(elf_machine_read("/nonexistent/libnccl.so.2", &m) == -ENOENT);
        CHECK(elf_machine_parse((const uint8_t *)"\177ELF\2\1\1", 7, &m) == -EBADMSG);
}

static void test_machine_names(void)
{
        char name[64];

        CHECK_STREQ(elf_machine_name(&(struct elf_machine){ EM_X86_64, ELFCLASS32, ELFDATA2LSB }, name,
                                     sizeof(name)),
                    "x86-64 32-bit");
        CHECK_STREQ(elf_machine_name(&(struct elf_machine){ EM_PPC64, ELFCLASS64, ELFDATA2MSB }, name,
                                     sizeof(name)),
                    "PowerPC64 big-endian");
        CHECK_STREQ(
                elf_machine_name(&(struct elf_machine){ 9999, ELFCLASS64, ELFDATA2LSB }, name, sizeof(name)),
                "ELF machine 9999 (64-bit, little-endian)");
        /* This program's own machine is the one its compiler built it for. */
        CHECK(elf_machine_self().machine != 0);
        CHECK(elf_machine_self().elf_class == (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32));
}

static void test_doctor_names_both_machines(void)
{
        json_object *c = nccl_check(FIXTURES_DIR "/nccl-build-a", aarch64);

        CHECK_STREQ(field(c, "status"), "\"fail\"");
        CHECK_STREQ(field(c, "summary"),
                    "\"NCCL 2.28.9 is built for x86-64, this node runs AArch64: no job here "
                    "can load it\"");
        CHECK_STREQ(field(c, "evidence"),
                    "[\"\\/usr\\/lib\\/aarch64-linux-gnu\\/libnccl.so.2: ELF for x86-64\","
                    "\"sparkd: ELF for AArch64\"]");
        CHECK_STREQ(field(c, "fix"),
                    "\"install the NCCL built for AArch64 (libnccl2 of this node's architecture)\"");
        json_object_put(c);

        c = nccl_check(FIXTURES_DIR "/nccl-build-a", x86_64);
        CHECK_STREQ(field(c, "status"), "\"ok\"");
        CHECK_STREQ(field(c, "evidence"),
                    "[\"\\/usr\\/lib\\/aarch64-linux-gnu\\/libnccl.so.2: ELF for x86-64, as sparkd\"]");
        json_object_put(c);

        c = nccl_check(FIXTURES_DIR "/spark-twins", x86_64);
        CHECK_STREQ(field(c, "status"), "\"fail\"");
        CHECK_STREQ(field(c, "summary"),
                    "\"NCCL 2.28.9 is built for AArch64, this node runs x86-64: no job here "
                    "can load it\"");
        json_object_put(c);
}

static void test_doctor_not_a_library(void)
{
        char root[] = "/tmp/sparkd-test-nccl-XXXXXX", path[PATH_MAX], cmd[PATH_MAX + 16];
        json_object *c;
        FILE *f;

        CHECK(mkdtemp(root) != NULL);
        snprintf(path, sizeof(path), "%s/usr/local/cuda/lib64", root);
        snprintf(cmd, sizeof(cmd), "mkdir -p %s", path);
        CHECK(system(cmd) == 0);
        snprintf(path, sizeof(path), "%s/usr/local/cuda/lib64/libnccl.so.2.27.7", root);
        f = fopen(path, "we");
        CHECK(f != NULL);
        if (f) {
                fputs("not a library\n", f);
                fclose(f);
        }
        c = nccl_check(root, aarch64);
        CHECK_STREQ(field(c, "status"), "\"fail\"");
        CHECK_STREQ(field(c, "summary"),
                    "\"NCCL 2.27.7 at \\/usr\\/local\\/cuda\\/lib64\\/libnccl.so.2.27.7 is not a "
                    "library: nothing here can load it\"");
        CHECK_STREQ(field(c, "evidence"),
                    "[\"\\/usr\\/local\\/cuda\\/lib64\\/libnccl.so.2.27.7: not an ELF file\"]");
        json_object_put(c);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
        CHECK(system(cmd) == 0);
}

int main(void)
{
        RUN(test_machine_of_files);
        RUN(test_machine_names);
        RUN(test_doctor_names_both_machines);
        RUN(test_doctor_not_a_library);
        return test_result();
}
