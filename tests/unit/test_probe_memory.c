/* The probe memory guard: reading MemAvailable, the check's arithmetic and its message, and the
 * nccl kind's size function (host buffers always, device buffers on unified memory). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/config/probe_kinds.h"
#include "daemon/probe/probe_memory.h"
#include "test.h"

#define GIB (1ULL << 30)

static void test_parse_meminfo(void)
{
        uint64_t v = 0;

        CHECK(probe_memory_parse_meminfo("MemTotal:       127535744 kB\nMemFree:         1000 kB\n"
                                         "MemAvailable:   12582912 kB\nBuffers: 1 kB\n",
                                         &v) == 0);
        CHECK(v == 12ULL * GIB);
        CHECK(probe_memory_parse_meminfo("MemTotal: 1 kB\n", &v) == -ENOENT);
        CHECK(probe_memory_parse_meminfo("MemAvailable: lots\n", &v) == -EINVAL);
        CHECK(probe_memory_parse_meminfo("MemAvailable: 12 MB\n", &v) == -EINVAL);
        CHECK(probe_memory_parse_meminfo("", &v) == -ENOENT);
}

static void test_check(void)
{
        char err[320] = "";

        /* 16 GiB asked with 20 GiB available and an 8 GiB margin: 4 GiB would be left. */
        CHECK(probe_memory_check("nccl", 16 * GIB, 20 * GIB, 8 * GIB, err, sizeof(err)) == -ENOMEM);
        CHECK(strstr(err, "needs 16.0 GiB (17179869184 bytes)") != NULL);
        CHECK(strstr(err, "has 20.0 GiB (21474836480 bytes) available") != NULL);
        CHECK(strstr(err, "8.0 GiB (8589934592 bytes) must stay free") != NULL);
        CHECK(strstr(err, "memory_margin") != NULL);
        /* More asked than there is at all. */
        CHECK(probe_memory_check("nccl", 16 * GIB, 4 * GIB, 0, err, sizeof(err)) == -ENOMEM);
        /* Exactly the margin left passes; one byte more asked does not. */
        CHECK(probe_memory_check("nccl", 16 * GIB, 24 * GIB, 8 * GIB, err, sizeof(err)) == 0);
        CHECK(probe_memory_check("nccl", 16 * GIB + 1, 24 * GIB, 8 * GIB, err, sizeof(err)) == -ENOMEM);
        CHECK(probe_memory_check("rdma", 0, 0, 0, err, sizeof(err)) == 0);
}

static void test_nccl_needed(void)
{
        const struct probe_kind *k = probe_kind_find("nccl");
        json_object *given = json_object_new_object(), *params = NULL;
        char err[256];

        CHECK(k && k->memory_needed);
        json_object_object_add(given, "max_bytes", json_object_new_int64((int64_t)(16 * GIB)));
        CHECK(probe_kind_params(k, given, &params, err, sizeof(err)) == 0);
        CHECK(k->memory_needed(params, false) == 16 * GIB);
        CHECK(k->memory_needed(params, true) == 48 * GIB);
        CHECK(probe_kind_find("rtt")->memory_needed == NULL);
        json_object_put(params);
        params = NULL;

        /* rdma: 2 rails x 16 queue pairs x inbox and outbox of 8 MiB, and a page of control. */
        k = probe_kind_find("rdma");
        CHECK(k && k->memory_needed);
        json_object_put(given);
        given = json_object_new_object();
        json_object_object_add(given, "qps", json_object_new_int(16));
        json_object_object_add(given, "size", json_object_new_int(8 << 20));
        CHECK(probe_kind_params(k, given, &params, err, sizeof(err)) == 0);
        CHECK(k->memory_needed(params, false) ==
              2ULL * 16 * 2 * (8 << 20) + (uint64_t)sysconf(_SC_PAGESIZE));
        CHECK(k->memory_needed(params, true) == k->memory_needed(params, false));
        json_object_put(given);
        json_object_put(params);
}

static void test_guard_reads_host_root(void)
{
        const struct probe_kind *k = probe_kind_find("nccl");
        char root[] = "/tmp/test-probe-memory-XXXXXX", path[128], err[320];
        json_object *params = NULL, *given = json_object_new_object();
        FILE *f;

        CHECK(mkdtemp(root) != NULL);
        snprintf(path, sizeof(path), "%s/proc", root);
        CHECK(mkdir(path, 0755) == 0);
        /* No meminfo: a clear error, not a pass. */
        CHECK(probe_kind_params(k, NULL, &params, err, sizeof(err)) == 0);
        CHECK(probe_memory_guard(k, params, false, root, 0, err, sizeof(err)) == -ENOENT);
        CHECK(strstr(err, "proc/meminfo") != NULL);
        json_object_put(params);

        snprintf(path, sizeof(path), "%s/proc/meminfo", root);
        f = fopen(path, "w");
        CHECK(f != NULL);
        fprintf(f, "MemTotal: 131072000 kB\nMemAvailable: 10485760 kB\n"); /* 10 GiB */
        fclose(f);
        json_object_object_add(given, "max_bytes", json_object_new_int64((int64_t)(16 * GIB)));
        CHECK(probe_kind_params(k, given, &params, err, sizeof(err)) == 0);
        CHECK(probe_memory_guard(k, params, true, root, 8 * GIB, err, sizeof(err)) == -ENOMEM);
        CHECK(strstr(err, "needs 48.0 GiB") != NULL && strstr(err, "10.0 GiB") != NULL);
        /* The default 256 MiB fits in 10 GiB with a 1 GiB margin. */
        json_object_put(params);
        CHECK(probe_kind_params(k, NULL, &params, err, sizeof(err)) == 0);
        CHECK(probe_memory_guard(k, params, true, root, GIB, err, sizeof(err)) == 0);
        /* Kinds without a size function are never refused. */
        CHECK(probe_memory_guard(probe_kind_find("rtt"), params, true, root, 1024 * GIB, err, sizeof(err)) ==
              0);
        json_object_put(params);
        json_object_put(given);
        unlink(path);
        snprintf(path, sizeof(path), "%s/proc", root);
        rmdir(path);
        rmdir(root);
}

int main(void)
{
        RUN(test_parse_meminfo);
        RUN(test_check);
        RUN(test_nccl_needed);
        RUN(test_guard_reads_host_root);
        return test_result();
}
