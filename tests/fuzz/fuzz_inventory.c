/*
 * The inventory over a whole host tree: a copy of the spark-rail-faults fixture in a tmpfs, cut
 * to one pair of twins (mlx5_0 and mlx5_2) for speed, some of whose files the input rewrites or
 * removes, read as the daemon reads a host
 * (fabric_facts_read: netdevs, RDMA ports and GID tables, PCIe links and AER, driver, GPUs,
 * modules, NCCL, limits), then judged by the doctor and turned into the NCCL environment.
 *
 * The input is pieces separated by NUL bytes. A piece's first byte picks a file (its low bits
 * index files[]); with the high bit set the file is removed, else the rest of the piece is its
 * new content. Every run starts from the fixture as committed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/fabric/doctor.h"
#include "daemon/fabric/envgen.h"
#include "fuzz.h"
#include "inventory/fabric.h"

#define PCI  "sys/devices/pci0000:00/0000:00:00.0/0000:01:00.0/"
#define PORT PCI "infiniband/mlx5_0/ports/1/"

static const char *const files[] = {
        PORT "state",
        PORT "phys_state",
        PORT "rate",
        PORT "link_layer",
        PORT "gids/0",
        PORT "gids/1",
        PORT "gids/2",
        PORT "gids/3",
        PORT "gid_attrs/types/0",
        PORT "gid_attrs/types/3",
        PORT "gid_attrs/ndevs/0",
        PORT "gid_attrs/ndevs/3",
        PCI "net/enp1s0f0np0/operstate",
        PCI "net/enp1s0f0np0/ifindex",
        PCI "net/enp1s0f0np0/mtu",
        PCI "net/enp1s0f0np0/flags",
        PCI "net/enp1s0f0np0/speed",
        PCI "net/enp1s0f0np0/carrier",
        PCI "current_link_speed",
        PCI "current_link_width",
        PCI "max_link_speed",
        PCI "max_link_width",
        PCI "aer_dev_fatal",
        PCI "aer_dev_nonfatal",
        "proc/driver/nvidia/version",
        "proc/driver/nvidia/gpus/000f:01:00.0/information",
        "etc/security/limits.conf",
        "usr/local/cuda/include/nccl.h",
};
#define N_FILES (sizeof(files) / sizeof(files[0]))

static char root[256];
static char *original[N_FILES];
static size_t original_size[N_FILES];
static bool touched[N_FILES];

static void file_path(size_t i, char *buf, size_t size)
{
        snprintf(buf, size, "%s/%s", root, files[i]);
}

static void write_file(size_t i, const void *data, size_t size)
{
        char path[512];
        FILE *f;

        file_path(i, path, sizeof(path));
        f = fopen(path, "wb");
        if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
                abort();
}

static void remove_tree(void)
{
        char cmd[300];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
        if (system(cmd) != 0)
                fprintf(stderr, "cannot remove %s\n", root);
}

/* A copy of the fixture, in memory where there is a tmpfs, and the files' contents as committed. */
static void setup(void)
{
        char cmd[2048], path[512];

        fuzz_tmpdir("inventory", root, sizeof(root));
        atexit(remove_tree);
        snprintf(cmd, sizeof(cmd),
                 "cp -a '%s/spark-rail-faults/.' '%s/' && cd '%s/sys' && rm -rf class/infiniband/mlx5_1 "
                 "class/infiniband/mlx5_3 class/net/enp1s0f1np1 class/net/enP2p1s0f1np1 class/net/enP7s7 "
                 "class/net/lo devices/pci0000:00/0000:00:00.0/0000:01:00.1 "
                 "devices/pci0002:00/0002:00:00.0/0002:01:00.1 devices/pci0007:00 devices/virtual",
                 FIXTURES_DIR, root, root);
        if (system(cmd) != 0)
                abort();
        for (size_t i = 0; i < N_FILES; i++) {
                FILE *f;
                long size;

                file_path(i, path, sizeof(path));
                f = fopen(path, "rb");
                if (!f || fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0)
                        abort();
                original_size[i] = (size_t)size;
                original[i] = malloc(original_size[i] + 1);
                if (!original[i] || fread(original[i], 1, original_size[i], f) != original_size[i])
                        abort();
                fclose(f);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const uint8_t *p = data, *end = data + size;
        struct fabric_facts facts = { 0 };

        if (!root[0])
                setup();
        while (p < end) {
                const uint8_t *nul = memchr(p, '\0', (size_t)(end - p));
                size_t len = nul ? (size_t)(nul - p) : (size_t)(end - p);

                if (len > 0) {
                        size_t i = (p[0] & 0x7f) % N_FILES;
                        char path[512];

                        touched[i] = true;
                        if (p[0] & 0x80) {
                                file_path(i, path, sizeof(path));
                                unlink(path);
                        } else {
                                write_file(i, p + 1, len - 1);
                        }
                }
                p += len + 1;
        }

        if (fabric_facts_read(root, NULL, false, &facts) == 0) {
                json_object *j;

                (void)fabric_facts_add_address(&facts, "enp1s0f0np0", "10.0.0.1/24");
                j = fabric_facts_to_json(&facts);
                json_object_put(j);
                j = doctor_run(&facts);
                json_object_put(j);
                j = envgen_build(&facts, ENV_MODE_AUTO);
                json_object_put(j);
        }
        fabric_facts_free(&facts);

        for (size_t i = 0; i < N_FILES; i++)
                if (touched[i]) {
                        write_file(i, original[i], original_size[i]);
                        touched[i] = false;
                }
        return 0;
}
