/* Host facts (NVIDIA driver, GPUs, peermem, DMA-BUF, RDMA modules, NCCL, memlock) over the host
 * fixture trees in tests/fixtures/hosts (see its README.md), over trees made on the spot for the
 * edge cases, and once over this machine's own root. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macro.h"
#include "inventory/gpu.h"
#include "inventory/hostfacts.h"
#include "inventory/memlock.h"
#include "test.h"

#ifndef FIXTURES_DIR
#error "FIXTURES_DIR must name tests/fixtures/hosts (meson passes it)"
#endif

#define MiB (1024ULL * 1024)

static const char *host(const char *name)
{
        static char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", FIXTURES_DIR, name);
        return path;
}

static const char *joined(char *const *strv)
{
        static char buf[256];
        size_t used = 0;

        buf[0] = '\0';
        for (char *const *p = strv; p && *p; p++)
                used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", used ? "," : "", *p);
        return buf;
}

static const char *json_of(const struct hostfacts *f)
{
        static char buf[4096];
        json_object *j = hostfacts_to_json(f);

        snprintf(buf, sizeof(buf), "%s",
                 j ? json_object_to_json_string_ext(j,
                                                    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
                   : "(null)");
        json_object_put(j);
        return buf;
}

/* Files of a host root made for one test: put() creates the parents, rm_tree() removes it all. */
static void mkdir_parents(char *path)
{
        for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
                *p = '\0';
                mkdir(path, 0755);
                *p = '/';
        }
}

static void put(const char *root, const char *rel, const char *content)
{
        char path[PATH_MAX];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        mkdir_parents(path);
        f = fopen(path, "w");
        CHECK(f != NULL);
        if (f) {
                fputs(content, f);
                fclose(f);
        }
}

static void put_link(const char *root, const char *rel, const char *target)
{
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        mkdir_parents(path);
        CHECK(symlink(target, path) == 0);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void)st;
        (void)flag;
        (void)ftw;
        return remove(path);
}

static int remove_file(const char *root, const char *rel)
{
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        return unlink(path) < 0 ? -errno : 0;
}

static void rm_tree(const char *root)
{
        CHECK(nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS) == 0);
}

static char *new_root(void)
{
        char *root = strdup("/tmp/test-hostfacts-XXXXXX");

        CHECK(root && mkdtemp(root));
        return root;
}

static void test_parse_driver_version(void)
{
        static const struct {
                const char *text;
                int r;
                const char *version;
                bool is_open;
        } cases[] = {
                { "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build  "
                  "(dvs-builder@U22-I3-AM02-24-3)  Wed Sep 24 19:10:54 UTC 2025\nGCC version:  gcc 13.3.0\n",
                  0, "580.95.05", true },
                { "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  "
                  "(dvs-builder@U16-I3-B03-4-3)  Thu Jan 23 22:50:36 UTC 2025",
                  0, "570.86.15", true },
                { "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024",
                  0, "550.54.15", false },
                { "NVRM version: NVIDIA UNIX aarch64 Kernel Module  580.95.05  Release Build  "
                  "(dvs-builder@U22-I3-AM02-24-3)  Wed Sep 24 19:25:30 UTC 2025",
                  0, "580.95.05", false },
                { "", -EBADMSG, NULL, false },
                { "garbage\n", -EBADMSG, NULL, false },
                { "NVRM version: something else entirely 1.2.3", -EBADMSG, NULL, false },
                { "NVRM version: NVIDIA UNIX x86_64 Kernel Module  Tue Mar  5 22:23:56 UTC 2024", -EBADMSG,
                  NULL, false },
                /* the version must be on the first line */
                { "NVRM version: NVIDIA UNIX x86_64 Kernel Module\n550.54.15\n", -EBADMSG, NULL, false },
                { " NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15", -EBADMSG, NULL, false },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                char version[32] = "untouched";
                bool is_open = !cases[i].is_open;
                int before = test_failures;
                int r = hostfacts_parse_driver_version(cases[i].text, version, sizeof(version), &is_open);

                CHECK(r == cases[i].r);
                if (r == 0) {
                        CHECK_STREQ(version, cases[i].version);
                        CHECK(is_open == cases[i].is_open);
                } else {
                        CHECK_STREQ(version, "untouched");
                }
                if (test_failures != before)
                        fprintf(stderr, "  (case %zu)\n", i);
        }

        /* a version that does not fit */
        char small[6];
        CHECK(hostfacts_parse_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15",
                                             small, sizeof(small), NULL) == -ENOBUFS);
        CHECK(hostfacts_parse_driver_version(NULL, small, sizeof(small), NULL) == -EBADMSG);
}

static void test_parse_limits_line(void)
{
        static const struct {
                const char *line;
                int r;
                uint64_t memlock;
        } cases[] = {
                { "* soft memlock unlimited", HOSTFACTS_LIMIT_SOFT, HOSTFACTS_UNLIMITED },
                { "* hard memlock unlimited\n", HOSTFACTS_LIMIT_HARD, HOSTFACTS_UNLIMITED },
                { "*\t-\tmemlock\tinfinity", HOSTFACTS_LIMIT_SOFT | HOSTFACTS_LIMIT_HARD,
                  HOSTFACTS_UNLIMITED },
                { "*  soft  memlock  -1", HOSTFACTS_LIMIT_SOFT, HOSTFACTS_UNLIMITED },
                { "* SOFT MEMLOCK UNLIMITED", HOSTFACTS_LIMIT_SOFT, HOSTFACTS_UNLIMITED },
                { "* soft memlock 64", HOSTFACTS_LIMIT_SOFT, 65536 },
                { "* hard memlock 0", HOSTFACTS_LIMIT_HARD, 0 },
                { "   * soft memlock 8192   # distribution default", HOSTFACTS_LIMIT_SOFT, 8 * MiB },
                { "* soft memlock 18446744073709551615", HOSTFACTS_LIMIT_SOFT, HOSTFACTS_UNLIMITED },
                /* comments, blanks, other items, other domains */
                { "", 0, 0 },
                { "   \t\n", 0, 0 },
                { "# * soft memlock unlimited", 0, 0 },
                { "* soft nofile 65536", 0, 0 },
                { "@rdma soft memlock unlimited", 0, 0 },
                { "%admins hard memlock unlimited", 0, 0 },
                { "geo - memlock unlimited", 0, 0 },
                { "1000: soft memlock unlimited", 0, 0 },
                /* malformed */
                { "* soft memlock", -EINVAL, 0 },
                { "* soft memlock unlimited extra", -EINVAL, 0 },
                { "*", -EINVAL, 0 },
                { "* medium memlock unlimited", -EINVAL, 0 },
                { "* soft memlock lots", -EINVAL, 0 },
                { "* soft memlock 64k", -EINVAL, 0 },
                { "* soft memlock +64", -EINVAL, 0 },
                { "* soft memlock 99999999999999999999999", -EINVAL, 0 },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                uint64_t memlock = 12345;
                int before = test_failures;
                int r = hostfacts_parse_limits_line(cases[i].line, &memlock);

                CHECK(r == cases[i].r);
                CHECK(memlock == (r > 0 ? cases[i].memlock : 12345));
                if (test_failures != before)
                        fprintf(stderr, "  (line \"%s\": got %d)\n", cases[i].line, r);
        }
}

/* Seed 001 hardware with the proprietary 580 driver and no peermem: DMA-BUF is refused for the
 * module type; limits.d's unlimited replaces limits.conf's 64 MiB. */
static void test_spark_twins(void)
{
        struct hostfacts f;

        CHECK(hostfacts_read(host("spark-twins"), &f) == 0);
        CHECK(f.has_nvidia_driver);
        CHECK_STREQ(f.driver_version, "580.95.05");
        CHECK(!f.is_open_kernel_module);
        CHECK(f.n_gpus == 1);
        CHECK_STREQ(f.gpus[0].model, "NVIDIA GB10");
        CHECK_STREQ(f.gpus[0].bus, "000f:01:00.0");
        CHECK(f.gpus[0].is_unified_memory);
        CHECK(f.has_unified_memory);
        CHECK(!f.has_peermem);
        CHECK(!f.is_dmabuf_possible);
        CHECK_STREQ(f.dmabuf_reason, "the NVIDIA driver is the proprietary kernel module; DMA-BUF needs the "
                                     "open one (580 or later)");
        CHECK_STREQ(joined(f.rdma_modules_loaded), "ib_core,ib_uverbs,mlx5_core,mlx5_ib,rdma_cm,rdma_ucm");
        CHECK_STREQ(joined(f.rdma_modules_missing), "");
        CHECK(f.has_nccl);
        CHECK_STREQ(f.nccl_path, "/usr/local/cuda/targets/sbsa-linux/lib/libnccl.so.2");
        CHECK_STREQ(f.nccl_version, "2.28.9"); /* from the name libnccl.so.2 links to */
        CHECK(f.memlock_login == HOSTFACTS_UNLIMITED);
        CHECK_STREQ(f.memlock_login_source, "/etc/security/limits.d/90-rdma.conf:1");
        CHECK(strstr(json_of(&f), FIXTURES_DIR) == NULL);
        hostfacts_free(&f);
}

/* Seed 004's spark-dgx-1 as it was when NCCL hung: GB10 with nvidia_peermem loaded. */
static void test_direct_fabric(void)
{
        struct hostfacts f;

        CHECK(hostfacts_read(host("direct-fabric"), &f) == 0);
        CHECK(f.has_nvidia_driver);
        CHECK_STREQ(f.driver_version, "580.82.09");
        CHECK(!f.is_open_kernel_module);
        CHECK(f.n_gpus == 1);
        CHECK_STREQ(f.gpus[0].model, "NVIDIA GB10");
        CHECK(f.has_unified_memory);
        CHECK(f.has_peermem);
        CHECK(!f.is_dmabuf_possible);
        CHECK_STREQ(joined(f.rdma_modules_loaded), "ib_core,ib_uverbs,mlx5_core,mlx5_ib,rdma_cm,rdma_ucm");
        CHECK_STREQ(joined(f.rdma_modules_missing), "");
        CHECK(f.has_nccl);
        CHECK_STREQ(f.nccl_path, "/usr/local/cuda/lib64/libnccl.so.2");
        CHECK_STREQ(f.nccl_version, "2.26.2");         /* from ../include/nccl.h */
        CHECK(f.memlock_login == HOSTFACTS_UNLIMITED); /* "-" line; the @rdma line is not everyone's */
        CHECK_STREQ(f.memlock_login_source, "/etc/security/limits.conf:2");
        hostfacts_free(&f);
}

/* The open 580 module on a 6.11 kernel: the one tree where DMA-BUF GPU Direct is possible. */
static void test_gb10_open_driver(void)
{
        struct hostfacts f;

        CHECK(hostfacts_read(host("gb10-open-driver"), &f) == 0);
        CHECK(f.has_nvidia_driver);
        CHECK_STREQ(f.driver_version, "580.95.05");
        CHECK(f.is_open_kernel_module);
        CHECK(f.n_gpus == 1);
        CHECK_STREQ(f.gpus[0].bus, "000f:01:00.0");
        CHECK(f.gpus[0].is_unified_memory);
        CHECK(f.has_unified_memory);
        CHECK(!f.has_peermem);
        CHECK(f.is_dmabuf_possible);
        CHECK_STREQ(f.dmabuf_reason,
                    "the open NVIDIA kernel module 580.95.05 on kernel 6.11.0-1016-nvidia can "
                    "hand GPU memory to the NIC through DMA-BUF");
        CHECK_STREQ(joined(f.rdma_modules_missing), "");
        CHECK(f.has_nccl);
        /* no libnccl.so.2 link: the newest versioned file */
        CHECK_STREQ(f.nccl_path, "/usr/lib/aarch64-linux-gnu/libnccl.so.2.28.9");
        CHECK_STREQ(f.nccl_version, "2.28.9");
        CHECK(f.memlock_login == 8 * MiB); /* soft 8192 KiB, hard unlimited: the soft one */
        CHECK_STREQ(f.memlock_login_source, "/etc/security/limits.conf:2");
        CHECK_STREQ(
                json_of(&f),
                "{\"nvidia_driver\":{\"present\":true,\"version\":\"580.95.05\",\"open_kernel_module\":true}"
                ","
                "\"gpus\":[{\"model\":\"NVIDIA GB10\",\"bus\":\"000f:01:00.0\",\"unified_memory\":true}],"
                "\"unified_memory\":true,\"peermem_loaded\":false,"
                "\"dmabuf\":{\"possible\":true,\"reason\":\"the open NVIDIA kernel module 580.95.05 on "
                "kernel "
                "6.11.0-1016-nvidia can hand GPU memory to the NIC through DMA-BUF\"},"
                "\"rdma_modules\":{\"loaded\":[\"ib_core\",\"ib_uverbs\",\"mlx5_core\",\"mlx5_ib\",\"rdma_"
                "cm\","
                "\"rdma_ucm\"],\"missing\":[]},"
                "\"nccl\":{\"present\":true,\"path\":\"/usr/lib/aarch64-linux-gnu/libnccl.so.2.28.9\","
                "\"version\":\"2.28.9\",\"machine\":\"AArch64\"},"
                "\"memlock_login\":{\"bytes\":8388608,\"source\":\"/etc/security/limits.conf:2\"}}");
        hostfacts_free(&f);
}

/* A generic x86 server: H100 (not unified), proprietary 550, no NCCL, no memlock setting. */
static void test_single_port(void)
{
        struct hostfacts f;

        CHECK(hostfacts_read(host("single-port"), &f) == 0);
        CHECK(f.has_nvidia_driver);
        CHECK_STREQ(f.driver_version, "550.54.15");
        CHECK(!f.is_open_kernel_module);
        CHECK(f.n_gpus == 1);
        CHECK_STREQ(f.gpus[0].model, "NVIDIA H100 80GB HBM3");
        CHECK_STREQ(f.gpus[0].bus, "0000:c1:00.0");
        CHECK(!f.gpus[0].is_unified_memory);
        CHECK(!f.has_unified_memory);
        CHECK(!f.has_peermem);
        CHECK(!f.is_dmabuf_possible);
        CHECK_STREQ(joined(f.rdma_modules_loaded), "ib_core,ib_uverbs,mlx5_core,mlx5_ib,rdma_cm,rdma_ucm");
        CHECK(!f.has_nccl);
        CHECK_STREQ(f.nccl_path, "");
        CHECK_STREQ(f.nccl_version, "");
        CHECK(f.memlock_login == 0);
        CHECK_STREQ(f.memlock_login_source, "");
        hostfacts_free(&f);
}

/* No NVIDIA driver; NCCL from Debian's libnccl2, its version from dpkg's status; 64 KiB memlock. */
static void test_mesh_two_nics(void)
{
        struct hostfacts f;

        CHECK(hostfacts_read(host("mesh-two-nics"), &f) == 0);
        CHECK(!f.has_nvidia_driver);
        CHECK(f.n_gpus == 0);
        CHECK(!f.has_unified_memory);
        CHECK(!f.is_dmabuf_possible);
        CHECK_STREQ(f.dmabuf_reason, "no NVIDIA driver is loaded");
        CHECK_STREQ(joined(f.rdma_modules_loaded), "ib_core,ib_uverbs,mlx5_core,mlx5_ib");
        CHECK_STREQ(joined(f.rdma_modules_missing), "rdma_cm,rdma_ucm");
        CHECK(f.has_nccl);
        CHECK_STREQ(f.nccl_path, "/usr/lib/aarch64-linux-gnu/libnccl.so.2");
        CHECK_STREQ(f.nccl_version, "2.27.7");
        CHECK(f.memlock_login == 65536);
        CHECK_STREQ(f.memlock_login_source, "/etc/security/limits.conf:2");
        CHECK_STREQ(json_of(&f),
                    "{\"nvidia_driver\":{\"present\":false,\"version\":null,\"open_kernel_module\":null},"
                    "\"gpus\":[],\"unified_memory\":false,\"peermem_loaded\":false,"
                    "\"dmabuf\":{\"possible\":false,\"reason\":\"no NVIDIA driver is loaded\"},"
                    "\"rdma_modules\":{\"loaded\":[\"ib_core\",\"ib_uverbs\",\"mlx5_core\",\"mlx5_ib\"],"
                    "\"missing\":[\"rdma_cm\",\"rdma_ucm\"]},"
                    "\"nccl\":{\"present\":true,\"path\":\"/usr/lib/aarch64-linux-gnu/libnccl.so.2\","
                    "\"version\":\"2.27.7\",\"machine\":\"AArch64\"},"
                    "\"memlock_login\":{\"bytes\":65536,\"source\":\"/etc/security/limits.conf:2\"}}");
        hostfacts_free(&f);
}

static void check_nothing(const struct hostfacts *f)
{
        CHECK(!f->has_nvidia_driver);
        CHECK_STREQ(f->driver_version, "");
        CHECK(f->n_gpus == 0);
        CHECK(!f->has_unified_memory && !f->has_peermem && !f->is_dmabuf_possible);
        CHECK_STREQ(f->dmabuf_reason, "no NVIDIA driver is loaded");
        CHECK_STREQ(joined(f->rdma_modules_loaded), "");
        CHECK_STREQ(joined(f->rdma_modules_missing), "ib_core,ib_uverbs,mlx5_core,mlx5_ib,rdma_cm,rdma_ucm");
        CHECK(!f->has_nccl);
        CHECK(f->memlock_login == 0);
        CHECK_STREQ(f->memlock_login_source, "");
}

/* A host root with nothing in it, one that does not exist, and a tree with sysfs only. */
static void test_nothing_there(void)
{
        _cleanup_free_ char *root = new_root();
        struct hostfacts f;

        CHECK(hostfacts_read(root, &f) == 0);
        check_nothing(&f);
        CHECK_STREQ(json_of(&f),
                    "{\"nvidia_driver\":{\"present\":false,\"version\":null,\"open_kernel_module\":null},"
                    "\"gpus\":[],\"unified_memory\":false,\"peermem_loaded\":false,"
                    "\"dmabuf\":{\"possible\":false,\"reason\":\"no NVIDIA driver is loaded\"},"
                    "\"rdma_modules\":{\"loaded\":[],\"missing\":[\"ib_core\",\"ib_uverbs\",\"mlx5_core\","
                    "\"mlx5_ib\",\"rdma_cm\",\"rdma_ucm\"]},"
                    "\"nccl\":{\"present\":false,\"path\":null,\"version\":null,\"machine\":null},"
                    "\"memlock_login\":{\"bytes\":null,\"source\":null}}");
        hostfacts_free(&f);
        hostfacts_free(&f); /* twice is harmless */
        rm_tree(root);

        CHECK(hostfacts_read("/nonexistent/host/root", &f) == 0);
        check_nothing(&f);
        hostfacts_free(&f);

        CHECK(hostfacts_read(host("malformed"), &f) == 0);
        check_nothing(&f);
        hostfacts_free(&f);
}

/* One reason per rule, on trees that differ from a DMA-BUF-capable host in one thing. */
static void test_dmabuf_rules(void)
{
        static const struct {
                const char *version; /* NULL: no version file */
                const char *osrelease;
                bool is_possible;
                const char *reason;
        } cases[] = {
                { "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  590.10.01  Release Build",
                  "5.12.0", true,
                  "the open NVIDIA kernel module 590.10.01 on kernel 5.12.0 can hand GPU memory to the NIC "
                  "through DMA-BUF" },
                { "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build",
                  "5.11.22-generic", false,
                  "kernel 5.11.22-generic is older than 5.12, the first whose RDMA imports DMA-BUF memory" },
                { "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build",
                  "4.18.0", false,
                  "kernel 4.18.0 is older than 5.12, the first whose RDMA imports DMA-BUF memory" },
                { "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build", NULL,
                  false,
                  "the kernel release is unknown; RDMA imports DMA-BUF memory only since Linux 5.12" },
                { "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build",
                  "garbage", false,
                  "the kernel release is unknown; RDMA imports DMA-BUF memory only since Linux 5.12" },
                { "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.172.08  Release Build",
                  "6.8.0", false,
                  "the open NVIDIA kernel module is 570.172.08; DMA-BUF needs 580 or later" },
                { "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Release Build", "6.8.0", false,
                  "the NVIDIA driver is the proprietary kernel module; DMA-BUF needs the open one (580 or "
                  "later)" },
                { "something the driver never wrote\n", "6.8.0", false,
                  "the NVIDIA driver's version line cannot be read; DMA-BUF needs the open kernel module "
                  "580 or "
                  "later" },
                { "", "6.8.0", false,
                  "the NVIDIA driver's version line cannot be read; DMA-BUF needs the open kernel module "
                  "580 or "
                  "later" },
        };

        for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
                _cleanup_free_ char *root = new_root();
                int before = test_failures;
                struct hostfacts f;

                put(root, "proc/driver/nvidia/version", cases[i].version);
                if (cases[i].osrelease)
                        put(root, "proc/sys/kernel/osrelease", cases[i].osrelease);
                CHECK(hostfacts_read(root, &f) == 0);
                CHECK(f.has_nvidia_driver);
                CHECK(f.is_dmabuf_possible == cases[i].is_possible);
                CHECK_STREQ(f.dmabuf_reason, cases[i].reason);
                if (test_failures != before)
                        fprintf(stderr, "  (case %zu)\n", i);
                hostfacts_free(&f);
                rm_tree(root);
        }
}

/* GPUs: directories without information files, models that only look like GB10, many GPUs. */
static void test_gpus(void)
{
        _cleanup_free_ char *root = new_root();
        struct hostfacts f;

        put(root, "proc/driver/nvidia/version", "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15");
        put(root, "proc/driver/nvidia/gpus/0000:01:00.0/information",
            "Model: \t\t NVIDIA GB100 Engineering\n");
        put(root, "proc/driver/nvidia/gpus/0000:02:00.0/information",
            "Model: \t\t NVIDIA GB200\nBus Location: \t 0000:02:00.0\n");
        put(root, "proc/driver/nvidia/gpus/0000:03:00.0/information", "IRQ: 42\n");
        put(root, "proc/driver/nvidia/gpus/0009:01:00.0/information",
            "Model: \t\t NVIDIA GB10 (test)\nBus Location: \t 0009:01:00.0\nGPU Excluded:\t No\n");
        CHECK(hostfacts_read(root, &f) == 0);
        CHECK(f.n_gpus == 4);
        CHECK_STREQ(f.gpus[0].model, "NVIDIA GB100 Engineering");
        CHECK_STREQ(f.gpus[0].bus, "0000:01:00.0"); /* from the directory name */
        CHECK(!f.gpus[0].is_unified_memory);
        CHECK(!f.gpus[1].is_unified_memory);
        CHECK_STREQ(f.gpus[2].model, "");
        CHECK_STREQ(f.gpus[2].bus, "0000:03:00.0");
        CHECK(!f.gpus[2].is_unified_memory);
        CHECK(f.gpus[3].is_unified_memory);
        CHECK(f.has_unified_memory);
        CHECK(strstr(json_of(&f), "{\"model\":null,\"bus\":\"0000:03:00.0\",\"unified_memory\":false}") !=
              NULL);
        hostfacts_free(&f);
        rm_tree(root);

        free(root);
        root = new_root();
        for (int i = 0; i < HOSTFACTS_MAX_GPUS + 3; i++) {
                char rel[128];

                snprintf(rel, sizeof(rel), "proc/driver/nvidia/gpus/0000:%02x:00.0/information", i + 1);
                put(root, rel, "Model: \t\t NVIDIA H100\n");
        }
        CHECK(hostfacts_read(root, &f) == 0);
        CHECK(f.n_gpus == HOSTFACTS_MAX_GPUS);
        CHECK(!f.has_nvidia_driver); /* no version file: the GPUs are listed, the driver is not known */
        hostfacts_free(&f);
        rm_tree(root);
}

/* Where NCCL is found and which version source wins. */
static void test_nccl_search(void)
{
        static const char dpkg[] =
                "Package: libnccl2\nStatus: install ok installed\nVersion: 1:2.21.5-1+cuda12.4\n";
        _cleanup_free_ char *root = NULL;
        struct hostfacts f;

        /* A plain libnccl.so.2 beside an old versioned file: the header says what it is. */
        root = new_root();
        put(root, "usr/local/lib/libnccl.so.2", "");
        put(root, "usr/local/lib/libnccl.so.2.18.1", "");
        put(root, "usr/local/include/nccl.h",
            "  #define NCCL_MAJOR 2\n#define NCCL_MINOR 23\n#define NCCL_PATCH 4\n");
        put(root, "usr/local/cuda/lib64/libnccl.so.2.28.9", ""); /* later in the search */
        CHECK(hostfacts_read(root, &f) == 0);
        CHECK(f.has_nccl);
        CHECK_STREQ(f.nccl_path, "/usr/local/lib/libnccl.so.2");
        CHECK_STREQ(f.nccl_version, "2.23.4");
        hostfacts_free(&f);
        rm_tree(root);

        /* dpkg speaks for the package's own directory only (epoch and revision dropped) ... */
        free(root);
        root = new_root();
        put(root, "usr/lib/x86_64-linux-gnu/libnccl.so.2", "");
        put(root, "var/lib/dpkg/status", dpkg);
        CHECK(hostfacts_read(root, &f) == 0);
        CHECK_STREQ(f.nccl_path, "/usr/lib/x86_64-linux-gnu/libnccl.so.2");
        CHECK_STREQ(f.nccl_version, "2.21.5");
        hostfacts_free(&f);
        rm_tree(root);

        /* ... not for a copy elsewhere; a header without all three numbers is no version. */
        free(root);
        root = new_root();
        put(root, "usr/local/cuda/lib64/libnccl.so.2", "");
        put(root, "usr/local/cuda/include/nccl.h", "#define NCCL_MAJOR 2\n#define NCCL_MINOR 23\n");
        put(root, "var/lib/dpkg/status", dpkg);
        CHECK(hostfacts_read(root, &f) == 0);
        CHECK(f.has_nccl);
        CHECK_STREQ(f.nccl_version, "");
        CHECK(strstr(json_of(&f),
                     "\"nccl\":{\"present\":true,\"path\":\"/usr/local/cuda/lib64/libnccl.so.2\","
                     "\"version\":null,\"machine\":null}") != NULL);
        hostfacts_free(&f);
        rm_tree(root);

        /* A removed package, a dangling link, a directory named like the library, CUDA targets. */
        free(root);
        root = new_root();
        put(root, "usr/lib/aarch64-linux-gnu/libnccl.so.2/x", "");
        put_link(root, "usr/lib64/libnccl.so.2", "libnccl.so.2.99.1");
        put(root, "usr/local/cuda/targets/sbsa-linux/lib/libnccl.so.2", "");
        put(root, "var/lib/dpkg/status",
            "Package: libnccl2\nStatus: deinstall ok config-files\nVersion: 2.21.5-1+cuda12.4\n\n"
            "Package: other\nStatus: install ok installed\nVersion: 2.0.0-1\n");
        CHECK(hostfacts_read(root, &f) == 0);
        CHECK(f.has_nccl);
        CHECK_STREQ(f.nccl_path, "/usr/local/cuda/targets/sbsa-linux/lib/libnccl.so.2");
        CHECK_STREQ(f.nccl_version, "");
        hostfacts_free(&f);
        rm_tree(root);
}

static void set_old_mtime(const char *root, const char *rel)
{
        char path[PATH_MAX];
        struct timespec times[2] = { { .tv_sec = 1700000000 }, { .tv_sec = 1700000000 } };

        snprintf(path, sizeof(path), "%s/%s", root, rel);
        CHECK(utimensat(AT_FDCWD, path, times, 0) == 0);
}

static const char *nccl_version_of(const char *root)
{
        static char version[64];
        struct hostfacts f;

        CHECK(hostfacts_read(root, &f) == 0);
        snprintf(version, sizeof(version), "%s", f.nccl_version);
        hostfacts_free(&f);
        return version;
}

/* A library directory's names are read again after any change to them, a settled one's too. */
static void test_nccl_search_follows_the_directory(void)
{
        _cleanup_free_ char *root = new_root();

        put(root, "usr/local/lib/libnccl.so.2.18.1", "");
        set_old_mtime(root, "usr/local/lib");
        CHECK_STREQ(nccl_version_of(root), "2.18.1");
        CHECK_STREQ(nccl_version_of(root), "2.18.1");
        put(root, "usr/local/lib/libnccl.so.2.19.3", "");
        CHECK_STREQ(nccl_version_of(root), "2.19.3");
        set_old_mtime(root, "usr/local/lib");
        CHECK_STREQ(nccl_version_of(root), "2.19.3");
        CHECK(remove_file(root, "usr/local/lib/libnccl.so.2.19.3") == 0);
        CHECK_STREQ(nccl_version_of(root), "2.18.1");
        rm_tree(root);
}

/* limits.conf, then the .conf files of limits.d by name; soft wins, cut down to hard; junk skipped. */
static void test_limits_files(void)
{
        _cleanup_free_ char *root = new_root();
        struct hostfacts f;

        put(root, "etc/security/limits.conf", "* soft memlock unlimited\n* hard memlock unlimited\n");
        put(root, "etc/security/limits.d/10-a.conf", "this is not a limits line\n* hard memlock 1048576\n");
        put(root, "etc/security/limits.d/20-b.conf.disabled", "* - memlock 1\n");
        put(root, "etc/security/limits.d/.hidden.conf", "* - memlock 2\n");
        put(root, "etc/security/limits.d/30-c.conf/x", "* - memlock 3\n");
        CHECK(hostfacts_read(root, &f) == 0);
        CHECK(f.memlock_login == 1024 * MiB); /* soft unlimited, hard 1 GiB: the session gets 1 GiB */
        CHECK_STREQ(f.memlock_login_source, "/etc/security/limits.d/10-a.conf:2");
        hostfacts_free(&f);

        put(root, "etc/security/limits.d/40-d.conf", "\n# later wins\n*\t-\tmemlock\t4096\n");
        CHECK(hostfacts_read(root, &f) == 0);
        CHECK(f.memlock_login == 4 * MiB);
        CHECK_STREQ(f.memlock_login_source, "/etc/security/limits.d/40-d.conf:3");
        hostfacts_free(&f);
        rm_tree(root);

        /* only a hard limit: reported, for want of a soft one */
        free(root);
        root = new_root();
        put(root, "etc/security/limits.d/90-rdma.conf", "* hard memlock infinity\n");
        CHECK(hostfacts_read(root, &f) == 0);
        CHECK(f.memlock_login == HOSTFACTS_UNLIMITED);
        CHECK_STREQ(f.memlock_login_source, "/etc/security/limits.d/90-rdma.conf:1");
        CHECK(strstr(json_of(&f), "\"memlock_login\":{\"bytes\":\"unlimited\",\"source\":"
                                  "\"/etc/security/limits.d/90-rdma.conf:1\"}") != NULL);
        hostfacts_free(&f);
        rm_tree(root);
}

/* NCCL 2.28.9 sits in /usr/local/cuda on the machine these tests were written on. */
static void test_this_host(void)
{
        struct hostfacts f;

        CHECK(hostfacts_read("/", &f) == 0);
        CHECK(f.has_nvidia_driver == (access("/proc/driver/nvidia/version", F_OK) == 0));
        if (access("/usr/local/cuda/include/nccl.h", F_OK) == 0) {
                CHECK(f.has_nccl);
                CHECK(f.nccl_path[0] == '/');
                CHECK_STREQ(f.nccl_version, "2.28.9");
        } else
                printf("skip this host's NCCL: no /usr/local/cuda/include/nccl.h\n");
        printf("this host: %s\n", json_of(&f));
        hostfacts_free(&f);
}

int main(void)
{
        RUN(test_parse_driver_version);
        RUN(test_parse_limits_line);
        RUN(test_spark_twins);
        RUN(test_direct_fabric);
        RUN(test_gb10_open_driver);
        RUN(test_single_port);
        RUN(test_mesh_two_nics);
        RUN(test_nothing_there);
        RUN(test_dmabuf_rules);
        RUN(test_gpus);
        RUN(test_nccl_search);
        RUN(test_nccl_search_follows_the_directory);
        RUN(test_limits_files);
        RUN(test_this_host);
        return test_result();
}
