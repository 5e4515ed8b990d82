#include "hostfacts.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "sysfs.h"

/* Seed 004: DMA-BUF GPU Direct needs the open kernel module of this driver branch or later. */
#define DMABUF_MIN_DRIVER_MAJOR 580
/* Linux 5.12 let RDMA register a dma-buf as a memory region (ib_umem_dmabuf; user verbs memory
 * selects DMA_SHARED_BUFFER since then), which is the kernel half of DMA-BUF GPU Direct. */
#define DMABUF_MIN_KERNEL_MAJOR 5
#define DMABUF_MIN_KERNEL_MINOR 12

static const char *const rdma_modules[] = { "ib_core", "ib_uverbs", "mlx5_core",
                                            "mlx5_ib", "rdma_cm",   "rdma_ucm" };

/*
 * GPUs whose memory is the CPU's memory. GB10 (DGX Spark) has no memory of its own: CPU and GPU
 * share one coherent LPDDR5x pool, so nvidia-peermem has no GPU memory to pin and GPU Direct RDMA
 * through it hangs NCCL's start (seed 004). The big Grace superchips (GH200, GB200) are coherent
 * too but keep their own HBM as GPU memory, so they are not listed. A listed name counts when it
 * is a whole word of the model ("NVIDIA GB10").
 */
static const char *const unified_memory_models[] = { "GB10" };

/* Where a libnccl.so.2 may be, in the order the search goes, and its nccl.h "next to it". */
struct nccl_dir {
        const char *lib;
        const char *include;
        bool is_packaged; /* where Debian's libnccl2 puts it: only then is dpkg's version this copy's */
};

static const struct nccl_dir nccl_dirs[] = {
        { "usr/lib/x86_64-linux-gnu", "usr/include", true },
        { "usr/lib/aarch64-linux-gnu", "usr/include", true },
        { "usr/lib64", "usr/include", true },
        { "usr/lib", "usr/include", true },
        { "usr/local/lib", "usr/local/include", false },
        { "usr/local/cuda/lib64", "usr/local/cuda/include", false },
        /* then usr/local/cuda/targets/<each>/lib, see nccl_find() */
};

static inline void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}

_printf_(4, 0) static int host_vpath(char *buf, size_t size, const char *root, const char *fmt, va_list ap)
{
        size_t n = (size_t)snprintf(buf, size, "%s/", root);

        if (n >= size || (size_t)vsnprintf(buf + n, size - n, fmt, ap) >= size - n)
                return -ENAMETOOLONG;
        return 0;
}

/* ROOT/PATH (printf-style) into buf. */
_printf_(4, 5) static int host_path(char *buf, size_t size, const char *root, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = host_vpath(buf, size, root, fmt, ap);
        va_end(ap);
        return r;
}

/* Whether ROOT/PATH exists and, symlinks followed, is of the type (S_IFDIR, S_IFREG). */
_printf_(3, 4) static bool host_has(const char *root, mode_t type, const char *fmt, ...)
{
        char path[PATH_MAX];
        struct stat st;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = host_vpath(path, sizeof(path), root, fmt, ap);
        va_end(ap);
        return r == 0 && stat(path, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

/* "580.95.05", "2.28.9": at least two dot-separated groups of digits, nothing else. */
static bool is_version(const char *s, size_t n)
{
        bool has_digit = false;
        size_t dots = 0;

        for (size_t i = 0; i < n; i++) {
                if (isdigit((unsigned char)s[i]))
                        has_digit = true;
                else if (s[i] == '.' && has_digit) {
                        dots++;
                        has_digit = false;
                } else
                        return false;
        }
        return has_digit && dots > 0;
}

static int copy_version(char *dst, size_t size, const char *s, size_t n)
{
        if (n >= size)
                return -ENOBUFS;
        memcpy(dst, s, n);
        dst[n] = '\0';
        return 0;
}

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
                if (n == 0 || !is_version(p, n))
                        continue;
                if (copy_version(version, size, p, n) < 0)
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

/* A loaded module has a directory in /sys/module (built-in ones only when they have parameters). */
static int read_modules(const char *root, struct hostfacts *f)
{
        f->has_peermem = host_has(root, S_IFDIR, "sys/module/nvidia_peermem");
        f->rdma_modules_loaded = calloc(1, sizeof(char *));
        f->rdma_modules_missing = calloc(1, sizeof(char *));
        if (!f->rdma_modules_loaded || !f->rdma_modules_missing)
                return -ENOMEM;
        for (size_t i = 0; i < ARRAY_SIZE(rdma_modules); i++) {
                bool is_loaded = host_has(root, S_IFDIR, "sys/module/%s", rdma_modules[i]);
                int r = strv_push(is_loaded ? &f->rdma_modules_loaded : &f->rdma_modules_missing,
                                  rdma_modules[i]);

                if (r < 0)
                        return r;
        }
        return 0;
}

_printf_(2, 3) static void set_reason(struct hostfacts *f, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(f->dmabuf_reason, sizeof(f->dmabuf_reason), fmt, ap);
        va_end(ap);
}

/*
 * DMA-BUF GPU Direct needs the open NVIDIA kernel module 580 or later (seed 004) and a kernel
 * whose RDMA stack imports dma-bufs. No sysfs file says the latter: /sys/kernel/dmabuf exists
 * only with CONFIG_DMABUF_SYSFS_STATS (off in most distribution kernels), and dma-buf is built
 * in, so it has no /sys/module entry. The kernel release is the indicator: 5.12 or later.
 */
static void decide_dmabuf(const char *root, struct hostfacts *f)
{
        unsigned long driver_major;
        unsigned major, minor;
        char release[128];

        f->is_dmabuf_possible = false;
        if (!f->has_nvidia_driver) {
                set_reason(f, "no NVIDIA driver is loaded");
                return;
        }
        if (!f->driver_version[0]) {
                set_reason(f, "the NVIDIA driver's version line cannot be read; DMA-BUF needs the open "
                              "kernel module 580 or later");
                return;
        }
        if (!f->is_open_kernel_module) {
                set_reason(f, "the NVIDIA driver is the proprietary kernel module; DMA-BUF needs the open "
                              "one (580 or later)");
                return;
        }
        driver_major = strtoul(f->driver_version, NULL, 10);
        if (driver_major < DMABUF_MIN_DRIVER_MAJOR) {
                set_reason(f, "the open NVIDIA kernel module is %s; DMA-BUF needs 580 or later",
                           f->driver_version);
                return;
        }
        if (sysfs_read(root, release, sizeof(release), "proc/sys/kernel/osrelease") < 0 ||
            sscanf(release, "%u.%u", &major, &minor) != 2 || !isdigit((unsigned char)release[0])) {
                set_reason(
                        f,
                        "the kernel release is unknown; RDMA imports DMA-BUF memory only since Linux 5.12");
                return;
        }
        if (major < DMABUF_MIN_KERNEL_MAJOR ||
            (major == DMABUF_MIN_KERNEL_MAJOR && minor < DMABUF_MIN_KERNEL_MINOR)) {
                set_reason(f, "kernel %.40s is older than 5.12, the first whose RDMA imports DMA-BUF memory",
                           release);
                return;
        }
        f->is_dmabuf_possible = true;
        set_reason(f,
                   "the open NVIDIA kernel module %s on kernel %.40s can hand GPU memory to the NIC "
                   "through DMA-BUF",
                   f->driver_version, release);
}

/* NCCL_MAJOR/MINOR/PATCH from ROOT/INCLUDE/nccl.h. */
static int nccl_header_version(const char *root, const char *include, char *version, size_t size)
{
        static const char *const names[] = { "NCCL_MAJOR", "NCCL_MINOR", "NCCL_PATCH" };
        _cleanup_fclose_ FILE *file = NULL;
        _cleanup_free_ char *line = NULL;
        long v[] = { -1, -1, -1 };
        char path[PATH_MAX];
        size_t cap = 0;

        if (host_path(path, sizeof(path), root, "%s/nccl.h", include) < 0)
                return -ENAMETOOLONG;
        file = fopen(path, "re");
        if (!file)
                return -errno;
        while ((v[0] < 0 || v[1] < 0 || v[2] < 0) && getline(&line, &cap, file) > 0) {
                char name[32];
                long value;

                if (sscanf(line, " #define %31s %ld", name, &value) != 2 || value < 0)
                        continue;
                for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                        if (strcmp(name, names[i]) == 0)
                                v[i] = value;
        }
        if (v[0] < 0 || v[1] < 0 || v[2] < 0)
                return -EBADMSG;
        if ((size_t)snprintf(version, size, "%ld.%ld.%ld", v[0], v[1], v[2]) >= size)
                return -ENOBUFS;
        return 0;
}

/* The upstream part of an installed libnccl2's version in dpkg's status: "2.28.9-1+cuda13.0" is 2.28.9. */
static int dpkg_nccl_version(const char *root, char *version, size_t size)
{
        _cleanup_fclose_ FILE *file = NULL;
        _cleanup_free_ char *line = NULL;
        bool is_nccl = false, is_installed = false;
        char path[PATH_MAX], found[64] = "";
        size_t cap = 0;

        if (host_path(path, sizeof(path), root, "var/lib/dpkg/status") < 0)
                return -ENAMETOOLONG;
        file = fopen(path, "re");
        if (!file)
                return -errno;
        for (;;) {
                ssize_t n = getline(&line, &cap, file);
                char *s = n > 0 ? str_strip(line) : NULL;

                if (!s || !*s) { /* end of a paragraph */
                        if (is_nccl && is_installed && found[0]) {
                                char *upstream = strchr(found, ':') ? strchr(found, ':') + 1 : found;
                                char *revision = strrchr(upstream, '-');

                                if (revision)
                                        *revision = '\0';
                                if (!is_version(upstream, strlen(upstream)))
                                        return -EBADMSG;
                                return copy_version(version, size, upstream, strlen(upstream));
                        }
                        if (!s)
                                return -ENOENT;
                        is_nccl = is_installed = false;
                        found[0] = '\0';
                        continue;
                }
                if (line[0] == ' ' || line[0] == '\t') /* a continuation line */
                        continue;
                if (strncmp(s, "Package:", 8) == 0)
                        is_nccl = strcmp(str_strip(s + 8), "libnccl2") == 0;
                else if (strncmp(s, "Status:", 7) == 0) {
                        const char *status = str_strip(s + 7);
                        size_t len = strlen(status);

                        is_installed = len >= 12 && strcmp(status + len - 12, "ok installed") == 0;
                } else if (strncmp(s, "Version:", 8) == 0)
                        snprintf(found, sizeof(found), "%s", str_strip(s + 8));
        }
}

/* The version in a file name "libnccl.so.2.28.9" (or a path ending in one). */
static const char *nccl_name_version(const char *name)
{
        static const char prefix[] = "libnccl.so.";
        const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;

        if (strncmp(base, prefix, strlen(prefix)) != 0 || strncmp(base + strlen(prefix), "2.", 2) != 0)
                return NULL;
        base += strlen(prefix);
        return is_version(base, strlen(base)) && strchr(base, '.') != strrchr(base, '.') ? base : NULL;
}

/* Looks for libnccl.so.2 or libnccl.so.2.X.Y in ROOT/DIR; 1 when found (facts filled), else 0. */
static int nccl_look_in(const char *root, const char *dir, const char *include, bool is_packaged,
                        struct hostfacts *f)
{
        _cleanup_(closedirp) DIR *d = NULL;
        char path[PATH_MAX], newest[NAME_MAX + 1] = "", target[PATH_MAX];
        const char *version = NULL;
        struct dirent *de;
        bool has_soname;
        ssize_t n;

        if (host_path(path, sizeof(path), root, "%s", dir) < 0 || !(d = opendir(path)))
                return 0;
        while ((de = readdir(d))) {
                if (!nccl_name_version(de->d_name) || !host_has(root, S_IFREG, "%s/%s", dir, de->d_name))
                        continue;
                if (!newest[0] || strverscmp(de->d_name, newest) > 0)
                        snprintf(newest, sizeof(newest), "%s", de->d_name);
        }
        has_soname = host_has(root, S_IFREG, "%s/libnccl.so.2", dir);
        if (!has_soname && !newest[0])
                return 0;

        if ((size_t)snprintf(f->nccl_path, sizeof(f->nccl_path), "/%s/%s", dir,
                             has_soname ? "libnccl.so.2" : newest) >= sizeof(f->nccl_path)) {
                f->nccl_path[0] = '\0';
                return 0;
        }
        f->has_nccl = true;
        /* The version in a name counts only for the file the loader takes: the one libnccl.so.2
         * links to, or the newest when there is no libnccl.so.2. A plain libnccl.so.2 (CUDA's
         * tarball layout) names none; then the header beside it, then dpkg. */
        if (has_soname) {
                if (host_path(path, sizeof(path), root, "%s/libnccl.so.2", dir) == 0 &&
                    (n = readlink(path, target, sizeof(target) - 1)) > 0) {
                        target[n] = '\0';
                        version = nccl_name_version(target);
                }
        } else
                version = nccl_name_version(newest);
        if (version && copy_version(f->nccl_version, sizeof(f->nccl_version), version, strlen(version)) == 0)
                return 1;
        if (nccl_header_version(root, include, f->nccl_version, sizeof(f->nccl_version)) == 0)
                return 1;
        if (!is_packaged || dpkg_nccl_version(root, f->nccl_version, sizeof(f->nccl_version)) < 0)
                f->nccl_version[0] = '\0';
        return 1;
}

static int nccl_find(const char *root, struct hostfacts *f)
{
        _cleanup_strv_ char **targets = NULL;
        int r;

        for (size_t i = 0; i < ARRAY_SIZE(nccl_dirs); i++)
                if (nccl_look_in(root, nccl_dirs[i].lib, nccl_dirs[i].include, nccl_dirs[i].is_packaged, f))
                        return 0;
        r = sysfs_list(root, &targets, "usr/local/cuda/targets");
        if (r == -ENOMEM)
                return r;
        for (char **t = r >= 0 ? targets : NULL; t && *t; t++) {
                char lib[PATH_MAX], include[PATH_MAX];

                snprintf(lib, sizeof(lib), "usr/local/cuda/targets/%s/lib", *t);
                snprintf(include, sizeof(include), "usr/local/cuda/targets/%s/include", *t);
                if (nccl_look_in(root, lib, include, false, f))
                        return 0;
        }
        return 0;
}

/*
 * pam_limits' rules: "#" starts a comment anywhere; a line is "domain type item value"; type and
 * item are case-insensitive; "-1", "-", "unlimited" and "infinity" mean no limit; a number is
 * KiB, and one too large for bytes is no limit either.
 */
int hostfacts_parse_limits_line(const char *line, uint64_t *memlock)
{
        char buf[512], *fields[5], *save = NULL;
        const char *value;
        size_t n = 0;
        uint64_t kib;
        int which;

        if (strlen(line) >= sizeof(buf))
                return -EINVAL;
        strcpy(buf, line);
        buf[strcspn(buf, "#")] = '\0';
        for (char *w = strtok_r(buf, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
                if (n == ARRAY_SIZE(fields))
                        return -EINVAL;
                fields[n++] = w;
        }
        if (n == 0)
                return 0;
        if (n != 4)
                return -EINVAL;
        /* Only "*" applies to every login; users, @groups, %groups and uid ranges are someone's. */
        if (strcasecmp(fields[2], "memlock") != 0 || strcmp(fields[0], "*") != 0)
                return 0;
        if (strcasecmp(fields[1], "soft") == 0)
                which = HOSTFACTS_LIMIT_SOFT;
        else if (strcasecmp(fields[1], "hard") == 0)
                which = HOSTFACTS_LIMIT_HARD;
        else if (strcmp(fields[1], "-") == 0)
                which = HOSTFACTS_LIMIT_SOFT | HOSTFACTS_LIMIT_HARD;
        else
                return -EINVAL;
        value = fields[3];
        if (strcmp(value, "-1") == 0 || strcmp(value, "-") == 0 || strcasecmp(value, "unlimited") == 0 ||
            strcasecmp(value, "infinity") == 0)
                *memlock = HOSTFACTS_UNLIMITED;
        else if (parse_uint64(value, 10, 0, UINT64_MAX, &kib) < 0)
                return -EINVAL;
        else
                *memlock = kib >= UINT64_MAX / 1024 ? HOSTFACTS_UNLIMITED : kib * 1024;
        return which;
}

struct limit_seen {
        bool is_set;
        uint64_t value;
        char source[256];
};

static void limit_set(struct limit_seen *l, uint64_t value, const char *file, unsigned lineno)
{
        l->is_set = true;
        l->value = value;
        snprintf(l->source, sizeof(l->source), "/%s:%u", file, lineno);
}

static void limits_read_file(const char *root, const char *file, struct limit_seen *soft,
                             struct limit_seen *hard)
{
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        char path[PATH_MAX];
        unsigned lineno = 0;
        size_t cap = 0;

        if (host_path(path, sizeof(path), root, "%s", file) < 0 || !(f = fopen(path, "re")))
                return;
        while (getline(&line, &cap, f) > 0) {
                uint64_t value;
                int which = hostfacts_parse_limits_line(line, &value);

                lineno++;
                /* pam_limits skips malformed lines too */
                if (which > 0 && (which & HOSTFACTS_LIMIT_SOFT))
                        limit_set(soft, value, file, lineno);
                if (which > 0 && (which & HOSTFACTS_LIMIT_HARD))
                        limit_set(hard, value, file, lineno);
        }
}

/*
 * limits.conf, then the .conf files in limits.d in byte order of their names, a later line
 * replacing an earlier one. A session gets the soft limit, cut down to the hard one as pam_limits
 * does. With only a hard limit set the soft one is inherited; the hard one is reported then
 * (a process may raise its soft limit up to it).
 */
static int read_memlock(const char *root, struct hostfacts *f)
{
        _cleanup_strv_ char **names = NULL;
        struct limit_seen soft = { 0 }, hard = { 0 };
        const struct limit_seen *use = NULL;
        int r;

        limits_read_file(root, "etc/security/limits.conf", &soft, &hard);
        r = sysfs_list(root, &names, "etc/security/limits.d");
        if (r == -ENOMEM)
                return r;
        for (char **n = r >= 0 ? names : NULL; n && *n; n++) {
                char file[PATH_MAX];
                size_t len = strlen(*n);

                if (len <= 5 || strcmp(*n + len - 5, ".conf") != 0)
                        continue;
                snprintf(file, sizeof(file), "etc/security/limits.d/%s", *n);
                limits_read_file(root, file, &soft, &hard);
        }
        if (soft.is_set)
                use = hard.is_set && hard.value < soft.value ? &hard : &soft;
        else if (hard.is_set)
                use = &hard;
        if (use) {
                f->memlock_login = use->value;
                snprintf(f->memlock_login_source, sizeof(f->memlock_login_source), "%s", use->source);
        }
        return 0;
}

int hostfacts_read(const char *host_root, struct hostfacts *out)
{
        struct hostfacts f = { 0 };
        int r;

        *out = (struct hostfacts){ 0 };
        read_driver(host_root, &f);
        r = read_gpus(host_root, &f);
        if (r >= 0)
                r = read_modules(host_root, &f);
        if (r >= 0)
                r = nccl_find(host_root, &f);
        if (r >= 0)
                r = read_memlock(host_root, &f);
        if (r < 0) {
                hostfacts_free(&f);
                return r;
        }
        decide_dmabuf(host_root, &f);
        *out = f;
        return 0;
}

void hostfacts_free(struct hostfacts *facts)
{
        strv_free(facts->rdma_modules_loaded);
        strv_free(facts->rdma_modules_missing);
        facts->rdma_modules_loaded = facts->rdma_modules_missing = NULL;
}

/* json-c leaves a value it failed to add with the caller: these put it then. */
static bool add(json_object *obj, const char *key, json_object *value)
{
        if (!value)
                return false;
        if (json_object_object_add(obj, key, value) < 0) {
                json_object_put(value);
                return false;
        }
        return true;
}

static bool push(json_object *array, json_object *value)
{
        if (!value)
                return false;
        if (json_object_array_add(array, value) < 0) {
                json_object_put(value);
                return false;
        }
        return true;
}

static bool add_null(json_object *obj, const char *key)
{
        return json_object_object_add(obj, key, NULL) == 0;
}

/* "" (not known, not there) is null. */
static bool add_string(json_object *obj, const char *key, const char *s)
{
        return *s ? add(obj, key, json_object_new_string(s)) : add_null(obj, key);
}

static json_object *add_child(json_object *obj, const char *key, json_object *child)
{
        return add(obj, key, child) ? child : NULL;
}

static bool add_strv(json_object *obj, const char *key, char *const *strv)
{
        json_object *a = add_child(obj, key, json_object_new_array());

        for (char *const *p = strv; a && p && *p; p++)
                if (!push(a, json_object_new_string(*p)))
                        return false;
        return a != NULL;
}

static bool add_memlock(json_object *obj, const struct hostfacts *f)
{
        if (!f->memlock_login_source[0])
                return add_null(obj, "bytes") && add_null(obj, "source");
        return add(obj, "bytes",
                   f->memlock_login == HOSTFACTS_UNLIMITED ? json_object_new_string("unlimited")
                                                           : json_object_new_uint64(f->memlock_login)) &&
               add_string(obj, "source", f->memlock_login_source);
}

json_object *hostfacts_to_json(const struct hostfacts *f)
{
        json_object *root = json_object_new_object(), *o = NULL;
        bool ok = root != NULL;

        ok = ok && (o = add_child(root, "nvidia_driver", json_object_new_object())) &&
             add(o, "present", json_object_new_boolean(f->has_nvidia_driver)) &&
             add_string(o, "version", f->driver_version) &&
             (f->has_nvidia_driver
                      ? add(o, "open_kernel_module", json_object_new_boolean(f->is_open_kernel_module))
                      : add_null(o, "open_kernel_module"));
        ok = ok && (o = add_child(root, "gpus", json_object_new_array()));
        for (size_t i = 0; ok && i < f->n_gpus; i++) {
                json_object *g = json_object_new_object();

                ok = push(o, g) && add_string(g, "model", f->gpus[i].model) &&
                     add_string(g, "bus", f->gpus[i].bus) &&
                     add(g, "unified_memory", json_object_new_boolean(f->gpus[i].is_unified_memory));
        }
        ok = ok && add(root, "unified_memory", json_object_new_boolean(f->has_unified_memory)) &&
             add(root, "peermem_loaded", json_object_new_boolean(f->has_peermem));
        ok = ok && (o = add_child(root, "dmabuf", json_object_new_object())) &&
             add(o, "possible", json_object_new_boolean(f->is_dmabuf_possible)) &&
             add_string(o, "reason", f->dmabuf_reason);
        ok = ok && (o = add_child(root, "rdma_modules", json_object_new_object())) &&
             add_strv(o, "loaded", f->rdma_modules_loaded) &&
             add_strv(o, "missing", f->rdma_modules_missing);
        ok = ok && (o = add_child(root, "nccl", json_object_new_object())) &&
             add(o, "present", json_object_new_boolean(f->has_nccl)) &&
             add_string(o, "path", f->nccl_path) && add_string(o, "version", f->nccl_version);
        ok = ok && (o = add_child(root, "memlock_login", json_object_new_object())) && add_memlock(o, f);
        if (!ok) {
                json_object_put(root);
                return NULL;
        }
        return root;
}
