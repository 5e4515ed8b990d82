#include "gpu.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "dotted_version.h"
#include "hostfacts.h"
#include "sysfs.h"

/*
 * GPUs whose memory is the CPU's memory. GB10 (DGX Spark) has no memory of its own: CPU and GPU
 * share one coherent LPDDR5x pool, so nvidia-peermem has no GPU memory to pin and GPU Direct RDMA
 * through it hangs NCCL's start. The big Grace superchips (GH200, GB200) are coherent
 * too but keep their own HBM as GPU memory, so they are not listed. A listed name counts when it
 * is a whole word of the model ("NVIDIA GB10").
 */
static const char *const unified_memory_models[] = { "GB10" };

int hostfacts_parse_driver_version(const char *text, char *version, size_t size, bool *is_open)
{
        static const char prefix[] = "NVRM version:", module[] = "Kernel Module";
        char line[512];
        const char *p;
        size_t n;

        if (!text || strncmp(text, prefix, strlen(prefix)) != 0)
                return -EBADMSG;
        n = strcspn(text, "\n");
        n = n < sizeof(line) ? n : sizeof(line) - 1;
        memcpy(line, text, n);
        line[n] = '\0';
        p = strstr(line, module);
        if (!p)
                return -EBADMSG;
        /* The version is the first dotted number after "Kernel Module": the open module has "for
         * ARCH" in between, and what follows (build host, date, time) has none. */
        for (p += strlen(module); *p; p += n) {
                p += strspn(p, " \t");
                n = strcspn(p, " \t");
                if (n == 0 || !dotted_version_is(p, n))
                        continue;
                if (dotted_version_copy(version, size, p, n) < 0)
                        return -ENOBUFS;
                if (is_open)
                        *is_open = strstr(line, "Open Kernel Module") != NULL;
                return 0;
        }
        return -EBADMSG;
}

static void read_driver(const char *root, struct hostfacts *f)
{
        char text[1024];
        int r;

        r = sysfs_read(root, text, sizeof(text), "proc/driver/nvidia/version");
        if (r == -ENOENT || r == -ENOTDIR)
                return;
        /* The file exists only while nvidia.ko is loaded; one we cannot parse is still a driver. */
        f->has_nvidia_driver = true;
        if (r < 0 || hostfacts_parse_driver_version(text, f->driver_version, sizeof(f->driver_version),
                                                    &f->is_open_kernel_module) < 0) {
                f->driver_version[0] = '\0';
                f->is_open_kernel_module = false;
        }
}

static bool has_word(const char *s, const char *word)
{
        size_t n = strlen(word);

        for (const char *p = strstr(s, word); p; p = strstr(p + 1, word))
                if ((p == s || !isalnum((unsigned char)p[-1])) && !isalnum((unsigned char)p[n]))
                        return true;
        return false;
}

static bool gpu_model_is_unified(const char *model)
{
        for (size_t i = 0; i < ARRAY_SIZE(unified_memory_models); i++)
                if (has_word(model, unified_memory_models[i]))
                        return true;
        return false;
}

/* "Model: \t\t NVIDIA GB10" and "Bus Location: \t 0000:01:00.0" lines of gpus/BUS/information. */
static void gpu_parse_information(char *text, struct gpu_info *g)
{
        for (char *line; (line = strsep(&text, "\n"));) {
                char *colon = strchr(line, ':'), *key, *value;

                if (!colon)
                        continue;
                *colon = '\0';
                key = str_strip(line);
                value = str_strip(colon + 1);
                if (strcmp(key, "Model") == 0)
                        snprintf(g->model, sizeof(g->model), "%s", value);
                else if (strcmp(key, "Bus Location") == 0 && *value)
                        snprintf(g->bus, sizeof(g->bus), "%s", value);
        }
}

static int read_gpus(const char *root, struct hostfacts *f)
{
        _cleanup_strv_ char **names = NULL;
        int r;

        r = sysfs_list(root, &names, "proc/driver/nvidia/gpus");
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        for (char **n = names; *n && f->n_gpus < HOSTFACTS_MAX_GPUS; n++) {
                struct gpu_info *g = &f->gpus[f->n_gpus++];
                char text[4096];

                snprintf(g->bus, sizeof(g->bus), "%s", *n);
                if (sysfs_read(root, text, sizeof(text), "proc/driver/nvidia/gpus/%s/information", *n) == 0)
                        gpu_parse_information(text, g);
                g->is_unified_memory = gpu_model_is_unified(g->model);
                f->has_unified_memory = f->has_unified_memory || g->is_unified_memory;
        }
        return 0;
}

int gpu_read(const char *host_root, struct hostfacts *f)
{
        read_driver(host_root, f);
        return read_gpus(host_root, f);
}
