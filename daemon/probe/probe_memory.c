#include "probe_memory.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/macro.h"

#define MEMINFO_MAX 16384

int probe_memory_parse_meminfo(const char *text, uint64_t *available)
{
        const char *line = text;

        while (line && *line) {
                if (strncmp(line, "MemAvailable:", 13) == 0) {
                        unsigned long long kb;
                        char unit[8];

                        if (sscanf(line + 13, "%llu %7s", &kb, unit) != 2 || strcmp(unit, "kB") != 0 ||
                            kb > UINT64_MAX / 1024)
                                return -EINVAL;
                        *available = (uint64_t)kb * 1024;
                        return 0;
                }
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
        return -ENOENT;
}

int probe_memory_available(const char *host_root, uint64_t *available, char *err, size_t err_size)
{
        const char *sep = host_root[strlen(host_root) - 1] == '/' ? "" : "/";
        _cleanup_close_ int fd = -EBADF;
        char path[4096], text[MEMINFO_MAX];
        size_t used = 0;
        int r;

        snprintf(path, sizeof(path), "%s%sproc/meminfo", host_root, sep);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                snprintf(err, err_size, "cannot read %s to check free memory: %s", path, strerror(errno));
                return -errno;
        }
        while (used < sizeof(text) - 1) {
                ssize_t n = read(fd, text + used, sizeof(text) - 1 - used);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        snprintf(err, err_size, "cannot read %s to check free memory: %s", path,
                                 strerror(errno));
                        return -errno;
                }
                if (n == 0)
                        break;
                used += (size_t)n;
        }
        text[used] = '\0';
        r = probe_memory_parse_meminfo(text, available);
        if (r < 0)
                snprintf(err, err_size, "%s has no line \"MemAvailable: N kB\" to check free memory by",
                         path);
        return r;
}

static double gib(uint64_t bytes)
{
        return (double)bytes / (double)(1ULL << 30);
}

int probe_memory_check(const char *kind, uint64_t needed, uint64_t available, uint64_t margin, char *err,
                       size_t err_size)
{
        if (needed <= available && available - needed >= margin)
                return 0;
        snprintf(err, err_size,
                 "refused: the %s probe needs %.1f GiB (%" PRIu64 " bytes) but this node has %.1f GiB "
                 "(%" PRIu64 " bytes) available and %.1f GiB (%" PRIu64
                 " bytes) must stay free (probe memory_margin); ask for a smaller size",
                 kind, gib(needed), needed, gib(available), available, gib(margin), margin);
        return -ENOMEM;
}

int probe_memory_guard(const struct probe_kind *kind, json_object *params, bool unified_memory,
                       const char *host_root, uint64_t margin, char *err, size_t err_size)
{
        uint64_t available;
        int r;

        if (!kind->memory_needed)
                return 0;
        r = probe_memory_available(host_root, &available, err, err_size);
        if (r < 0)
                return r;
        return probe_memory_check(kind->name, kind->memory_needed(params, unified_memory), available, margin,
                                  err, err_size);
}
