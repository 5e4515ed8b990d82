#include "kmod.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "host_path.h"
#include "hostfacts.h"

static const char *const rdma_modules[] = { "ib_core", "ib_uverbs", "mlx5_core",
                                            "mlx5_ib", "rdma_cm",   "rdma_ucm" };

/* A loaded module has a directory in /sys/module (built-in ones only when they have parameters). */
int kmod_read(const char *root, struct hostfacts *f)
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
