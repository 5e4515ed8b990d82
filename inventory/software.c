#include "software.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "dotted_version.h"
#include "gpu.h"
#include "host_path.h"
#include "hostfacts.h"
#include "nccl_lib.h"
#include "sysfs.h"

/* The system pythons' package directories (globbed over python3*): pip installs as root land in
 * usr/local; Debian's python3-* packages in usr/lib. Users' ~/.local and virtual environments
 * are not looked at: they are a job's own choice, not the node's. */
static const char *const python_dirs[][2] = {
        { "usr/lib", "dist-packages" },
        { "usr/local/lib", "dist-packages" },
        { "usr/local/lib", "site-packages" },
};

static void take_build_id(const char *root, struct software_nccl *n)
{
        char path[PATH_MAX];
        int r;

        if (host_path(path, sizeof(path), root, "%s", n->path + 1) < 0)
                r = -ENAMETOOLONG;
        else
                r = elf_build_id_read(path, n->build_id, sizeof(n->build_id));
        if (r == 0)
                return;
        n->build_id[0] = '\0';
        snprintf(n->build_id_error, sizeof(n->build_id_error), "%s",
                 r == -ENOENT    ? "no build id note"
                 : r == -ENODATA ? "no build id in the first 64 KiB"
                 : r == -EBADMSG ? "not an ELF file"
                                 : strerror(-r));
}

/* The version of a wheel from its dist-info directory "nvidia_nccl_cu12-2.21.5.dist-info". */
static void wheel_version(char **names, char *version, size_t size)
{
        static const char prefix[] = "nvidia_nccl_", suffix[] = ".dist-info";

        for (char **n = names; n && *n; n++) {
                size_t len = strlen(*n);
                const char *dash = strchr(*n, '-');

                if (strncmp(*n, prefix, strlen(prefix)) != 0 || !dash || len < strlen(suffix) ||
                    strcmp(*n + len - strlen(suffix), suffix) != 0)
                        continue;
                if (dotted_version_is(dash + 1, (size_t)(*n + len - strlen(suffix) - dash - 1)) &&
                    dotted_version_copy(version, size, dash + 1,
                                        (size_t)(*n + len - strlen(suffix) - dash - 1)) == 0)
                        return;
        }
        version[0] = '\0';
}

static int find_wheels(const char *root, struct software_facts *s)
{
        for (size_t d = 0; d < ARRAY_SIZE(python_dirs); d++) {
                _cleanup_strv_ char **pythons = NULL;
                int r = sysfs_list(root, &pythons, "%s", python_dirs[d][0]);

                if (r == -ENOMEM)
                        return r;
                for (char **p = r >= 0 ? pythons : NULL; p && *p && s->n_nccl < SOFTWARE_MAX_NCCL; p++) {
                        _cleanup_strv_ char **packages = NULL;
                        struct software_nccl *n = &s->nccl[s->n_nccl];
                        char lib[PATH_MAX];

                        if (strncmp(*p, "python3", 7) != 0)
                                continue;
                        snprintf(lib, sizeof(lib), "%s/%s/%s/nvidia/nccl/lib/libnccl.so.2",
                                 python_dirs[d][0], *p, python_dirs[d][1]);
                        if (!host_has(root, S_IFREG, "%s", lib))
                                continue;
                        *n = (struct software_nccl){ 0 };
                        if ((size_t)snprintf(n->path, sizeof(n->path), "/%s", lib) >= sizeof(n->path))
                                continue;
                        snprintf(n->origin, sizeof(n->origin), "pip");
                        r = sysfs_list(root, &packages, "%s/%s/%s", python_dirs[d][0], *p,
                                       python_dirs[d][1]);
                        if (r == -ENOMEM)
                                return r;
                        wheel_version(packages, n->version, sizeof(n->version));
                        take_build_id(root, n);
                        s->n_nccl++;
                }
        }
        return 0;
}

static int find_firmware(const char *root, struct software_facts *s)
{
        _cleanup_strv_ char **devices = NULL;
        int r = sysfs_list(root, &devices, "sys/class/infiniband");

        if (r == -ENOMEM)
                return r;
        for (char **d = r >= 0 ? devices : NULL; d && *d && s->n_firmware < SOFTWARE_MAX_FIRMWARE; d++) {
                struct software_firmware *fw = &s->firmware[s->n_firmware];

                if (sysfs_read(root, fw->fw_ver, sizeof(fw->fw_ver), "sys/class/infiniband/%s/fw_ver", *d) <
                    0)
                        continue;
                snprintf(fw->device, sizeof(fw->device), "%s", *d);
                s->n_firmware++;
        }
        return 0;
}

int software_read(const char *root, struct software_facts *s)
{
        struct hostfacts h = { 0 };
        int r;

        *s = (struct software_facts){ 0 };
        r = nccl_lib_find(root, &h);
        if (r < 0)
                return r;
        if (h.has_nccl) {
                struct software_nccl *n = &s->nccl[s->n_nccl++];

                snprintf(n->path, sizeof(n->path), "%s", h.nccl_path);
                snprintf(n->origin, sizeof(n->origin), "system");
                snprintf(n->version, sizeof(n->version), "%s", h.nccl_version);
                take_build_id(root, n);
        }
        r = find_wheels(root, s);
        if (r < 0)
                return r;
        r = gpu_read(root, &h);
        hostfacts_free(&h);
        if (r < 0)
                return r;
        snprintf(s->driver_version, sizeof(s->driver_version), "%s", h.driver_version);
        /* Without /proc/driver/nvidia (a container's view), the module's own version. */
        if (!s->driver_version[0] &&
            sysfs_read(root, s->driver_version, sizeof(s->driver_version), "sys/module/nvidia/version") < 0)
                s->driver_version[0] = '\0';
        if (sysfs_read(root, s->kernel, sizeof(s->kernel), "proc/sys/kernel/osrelease") < 0)
                s->kernel[0] = '\0';
        return find_firmware(root, s);
}

static json_object *string_or_null(const char *s)
{
        return s && s[0] ? json_object_new_string(s) : NULL;
}

json_object *software_to_json(const struct software_facts *s, const char *sparkd_version)
{
        json_object *o = json_object_new_object(), *nccl = json_object_new_array(),
                    *firmware = json_object_new_array();

        for (size_t i = 0; i < s->n_nccl; i++) {
                json_object *n = json_object_new_object();

                json_object_object_add(n, "path", json_object_new_string(s->nccl[i].path));
                json_object_object_add(n, "origin", json_object_new_string(s->nccl[i].origin));
                json_object_object_add(n, "version", string_or_null(s->nccl[i].version));
                json_object_object_add(n, "build_id", string_or_null(s->nccl[i].build_id));
                if (!s->nccl[i].build_id[0])
                        json_object_object_add(n, "build_id_error",
                                               string_or_null(s->nccl[i].build_id_error));
                json_object_array_add(nccl, n);
        }
        for (size_t i = 0; i < s->n_firmware; i++) {
                json_object *fw = json_object_new_object();

                json_object_object_add(fw, "device", json_object_new_string(s->firmware[i].device));
                json_object_object_add(fw, "fw_ver", json_object_new_string(s->firmware[i].fw_ver));
                json_object_array_add(firmware, fw);
        }
        json_object_object_add(o, "sparkd", string_or_null(sparkd_version));
        json_object_object_add(o, "kernel", string_or_null(s->kernel));
        json_object_object_add(o, "driver", string_or_null(s->driver_version));
        json_object_object_add(o, "nccl", nccl);
        json_object_object_add(o, "firmware", firmware);
        return o;
}
