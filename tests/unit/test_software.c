/* The software facts (inventory/software.c, elf_note.c) over the nccl-build-a/b host trees (one
 * NCCL version, two builds: tests/fixtures/nccl-builds/make-trees.sh), and the doctor's
 * consistency and firewall checks over sections and results built here. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "daemon/fabric/doctor.h"
#include "daemon/probe/firewall_listen.h"
#include "inventory/elf_note.h"
#include "inventory/fabric.h"
#include "inventory/software.h"
#include "test.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must name tests/fixtures/hosts (meson passes it)"
#endif

#define BUILD_A "2b1c3e7f5d9a4b6c8e0f1a2b3c4d5e6f7a8b9c0d"
#define BUILD_B "9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"

static const char *host(const char *name)
{
        static char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", FIXTURES_DIR, name);
        return path;
}

static void test_build_id_of_fixture(void)
{
        char hex[ELF_BUILD_ID_HEX_MAX], path[PATH_MAX + 64];

        snprintf(path, sizeof(path), "%s/usr/lib/aarch64-linux-gnu/libnccl.so.2", host("nccl-build-a"));
        CHECK(elf_build_id_read(path, hex, sizeof(hex)) == 0);
        CHECK_STREQ(hex, BUILD_A);
        snprintf(path, sizeof(path), "%s/proc/sys/kernel/osrelease", host("nccl-build-a"));
        CHECK(elf_build_id_read(path, hex, sizeof(hex)) == -EBADMSG);
        snprintf(path, sizeof(path), "%s/usr", host("nccl-build-a"));
        CHECK(elf_build_id_read(path, hex, sizeof(hex)) == -EINVAL);
        CHECK(elf_build_id_read("/nonexistent/libnccl.so.2", hex, sizeof(hex)) == -ENOENT);
}

static void test_build_id_malformed(void)
{
        /* A 64-bit little-endian header whose one PT_NOTE segment holds a note whose descsz runs
         * past the segment, then the same with a program header table past the data. */
        unsigned char elf[256] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
        char hex[ELF_BUILD_ID_HEX_MAX];

        elf[32] = 64;   /* e_phoff */
        elf[54] = 56;   /* e_phentsize */
        elf[56] = 1;    /* e_phnum */
        elf[64] = 4;    /* p_type PT_NOTE */
        elf[72] = 128;  /* p_offset */
        elf[96] = 32;   /* p_filesz */
        elf[128] = 4;   /* namesz */
        elf[132] = 200; /* descsz: past the segment */
        elf[136] = 3;   /* NT_GNU_BUILD_ID */
        memcpy(elf + 140, "GNU", 4);
        CHECK(elf_build_id_parse(elf, sizeof(elf), hex, sizeof(hex)) == -EBADMSG);
        elf[132] = 4; /* four bytes of id */
        memcpy(elf + 144, "\xde\xad\xbe\xef", 4);
        CHECK(elf_build_id_parse(elf, sizeof(elf), hex, sizeof(hex)) == 0);
        CHECK_STREQ(hex, "deadbeef");
        elf[32] = 254; /* the program headers past the end */
        CHECK(elf_build_id_parse(elf, sizeof(elf), hex, sizeof(hex)) == -ENODATA);
        CHECK(elf_build_id_parse(elf, 10, hex, sizeof(hex)) == -EBADMSG);
}

static void test_software_read(void)
{
        struct software_facts s;

        CHECK(software_read(host("nccl-build-b"), &s) == 0);
        CHECK(s.n_nccl == 2);
        CHECK_STREQ(s.nccl[0].path, "/usr/local/cuda/lib64/libnccl.so.2");
        CHECK_STREQ(s.nccl[0].origin, "system");
        CHECK_STREQ(s.nccl[0].version, "2.28.9");
        CHECK_STREQ(s.nccl[0].build_id, BUILD_B);
        CHECK_STREQ(s.nccl[1].path, "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2");
        CHECK_STREQ(s.nccl[1].origin, "pip");
        CHECK_STREQ(s.nccl[1].version, "2.28.9");
        CHECK_STREQ(s.nccl[1].build_id, BUILD_A);
        CHECK_STREQ(s.kernel, "6.8.0-1015-nvidia");
        CHECK_STREQ(s.driver_version, "580.95.05");
        CHECK(s.n_firmware == 0);
        CHECK(software_read(host("spark-twins"), &s) == 0);
        /* The fixture's library is an ELF header alone (nccl-builds/make-heads.py). */
        CHECK(s.n_nccl == 1 && strcmp(s.nccl[0].build_id_error, "no build id note") == 0);
}

/* [{node_id, name, software}] of the named trees. */
static json_object *nodes_of(const char *const *trees, const char *const *names, size_t n)
{
        json_object *nodes = json_object_new_array();

        for (size_t i = 0; i < n; i++) {
                json_object *node = json_object_new_object();
                struct software_facts s;

                CHECK(software_read(host(trees[i]), &s) == 0);
                json_object_object_add(node, "node_id", json_object_new_string(names[i]));
                json_object_object_add(node, "name", json_object_new_string(names[i]));
                json_object_object_add(node, "software", software_to_json(&s, "1.0"));
                json_object_array_add(nodes, node);
        }
        return nodes;
}

/* The doctor's check ID over facts holding only software_nodes and firewall. */
static json_object *check_of(json_object *software_nodes, json_object *firewall, const char *id)
{
        struct fabric_facts f = { .software_nodes = software_nodes, .firewall = firewall };
        json_object *result = doctor_run(&f), *checks, *found = NULL;

        json_object_object_get_ex(result, "checks", &checks);
        for (size_t i = 0; i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i), *v;

                if (json_object_object_get_ex(c, "id", &v) && strcmp(json_object_get_string(v), id) == 0)
                        found = json_object_get(c);
        }
        json_object_put(result);
        f.software_nodes = f.firewall = NULL;
        json_object_put(software_nodes);
        json_object_put(firewall);
        return found;
}

static const char *field(json_object *check, const char *key)
{
        json_object *v;

        return check && json_object_object_get_ex(check, key, &v) ? json_object_to_json_string(v) : "";
}

static void test_consistency_builds_differ(void)
{
        static const char *const trees[] = { "nccl-build-a", "nccl-build-b" }, *const names[] = { "a", "b" };
        json_object *c = check_of(nodes_of(trees, names, 2), NULL, "consistency");
        const char *evidence = field(c, "evidence");

        CHECK_STREQ(field(c, "status"), "\"fail\"");
        CHECK(strstr(field(c, "summary"), "same NCCL version in different builds"));
        CHECK(strstr(evidence, "\\/usr\\/lib\\/aarch64-linux-gnu\\/libnccl.so.2 build " BUILD_A ": a"));
        CHECK(strstr(evidence, "\\/usr\\/local\\/cuda\\/lib64\\/libnccl.so.2 build " BUILD_B ": b"));
        /* The wheel only b has is a difference of its own. */
        CHECK(strstr(evidence, "dist-packages\\/nvidia\\/nccl\\/lib\\/libnccl.so.2) none: a"));
        if (test_failures)
                fprintf(stderr, "%s\n", json_object_to_json_string(c));
        json_object_put(c);
}

static void test_consistency_equal_builds(void)
{
        static const char *const trees[] = { "nccl-build-a", "nccl-build-a" }, *const names[] = { "a", "b" };
        json_object *c = check_of(nodes_of(trees, names, 2), NULL, "consistency");

        CHECK_STREQ(field(c, "status"), "\"ok\"");
        CHECK_STREQ(field(c, "summary"), "\"the same software on 2 up nodes\"");
        json_object_put(c);
}

static void test_consistency_names_other_differences(void)
{
        static const char *const trees[] = { "nccl-build-a", "mesh-two-nics" }, *const names[] = { "a",
                                                                                                   "c" };
        json_object *nodes = nodes_of(trees, names, 2), *c, *sw, *fw = json_object_new_array(),
                    *dev = json_object_new_object();

        json_object_object_add(dev, "device", json_object_new_string("mlx5_0"));
        json_object_object_add(dev, "fw_ver", json_object_new_string("28.45.1020"));
        json_object_array_add(fw, dev);
        json_object_object_get_ex(json_object_array_get_idx(nodes, 1), "software", &sw);
        json_object_object_add(sw, "firmware", fw);
        c = check_of(nodes, NULL, "consistency");
        CHECK_STREQ(field(c, "status"), "\"warn\"");
        CHECK(strstr(field(c, "evidence"), "NCCL (the system's) 2.28.9: a"));
        CHECK(strstr(field(c, "evidence"), "NCCL (the system's) 2.27.7: c"));
        CHECK(strstr(field(c, "evidence"), "ConnectX firmware 28.45.1020: c"));
        CHECK(strstr(field(c, "evidence"), "NVIDIA driver none: c"));
        json_object_put(c);
}

static json_object *firewall_entry(const char *direction, const char *outcome)
{
        json_object *e = json_object_new_object();

        json_object_object_add(e, "peer", json_object_new_string("b"));
        json_object_object_add(e, "direction", json_object_new_string(direction));
        json_object_object_add(e, "iface", json_object_new_string("fa"));
        json_object_object_add(e, "address", json_object_new_string("10.99.0.1"));
        json_object_object_add(e, "peer_iface", json_object_new_string("fb"));
        json_object_object_add(e, "peer_address", json_object_new_string("10.99.0.2"));
        json_object_object_add(e, "port", json_object_new_int(41234));
        json_object_object_add(e, "port_range", json_object_new_string("32768-60999"));
        json_object_object_add(e, "outcome", json_object_new_string(outcome));
        json_object_object_add(e, "sparkd_port_works", json_object_new_boolean(true));
        return e;
}

/* The doctor's firewall check over one path's outcome. */
static json_object *firewall_check_of(const char *direction, const char *outcome)
{
        json_object *list = json_object_new_array();

        json_object_array_add(list, firewall_entry(direction, outcome));
        return check_of(NULL, list, "firewall");
}

static void test_firewall(void)
{
        json_object *c = firewall_check_of("outbound", "dropped");

        CHECK_STREQ(field(c, "status"), "\"fail\"");
        CHECK(strstr(field(c, "evidence"),
                     "b drops new TCP to its ephemeral port 41234 on fb (10.99.0.2), from fa"));
        CHECK(strstr(field(c, "fix"), "on b, let TCP in"));
        CHECK(strstr(field(c, "fix"), "ufw allow in on fb"));
        json_object_put(c);

        c = firewall_check_of("inbound", "refused");
        CHECK(strstr(field(c, "evidence"), "this node refuses new TCP from b"));
        CHECK(strstr(field(c, "fix"), "on this node"));
        CHECK(strstr(field(c, "fix"), "iifname \\\"fa\\\" tcp dport 32768-60999 accept"));
        json_object_put(c);

        c = firewall_check_of("outbound", "open");
        CHECK_STREQ(field(c, "status"), "\"ok\"");
        json_object_put(c);
}

static void test_port_range(void)
{
        uint16_t low = 0, high = 0;

        CHECK(fw_parse_port_range("32768\t60999\n", &low, &high) == 0 && low == 32768 && high == 60999);
        CHECK(fw_parse_port_range("40000 40000", &low, &high) == 0 && low == 40000 && high == 40000);
        CHECK(fw_parse_port_range("0 5", &low, &high) == -EINVAL);
        CHECK(fw_parse_port_range("60999 32768", &low, &high) == -EINVAL);
        CHECK(fw_parse_port_range("1 70000", &low, &high) == -EINVAL);
        CHECK(fw_parse_port_range("32768", &low, &high) == -EINVAL);
        CHECK(fw_parse_port_range("32768 60999 x", &low, &high) == -EINVAL);
}

int main(void)
{
        RUN(test_build_id_of_fixture);
        RUN(test_build_id_malformed);
        RUN(test_software_read);
        RUN(test_consistency_builds_differ);
        RUN(test_consistency_equal_builds);
        RUN(test_consistency_names_other_differences);
        RUN(test_firewall);
        RUN(test_port_range);
        return test_result();
}
