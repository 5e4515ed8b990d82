#include "hostfacts.h"

#include <stdbool.h>
#include <stdlib.h>

#include "common/strutil.h"
#include "dmabuf.h"
#include "gpu.h"
#include "kmod.h"
#include "memlock.h"
#include "memlock_unit.h"
#include "nccl_lib.h"

int hostfacts_read(const char *host_root, struct hostfacts *out)
{
        struct hostfacts f = { 0 };
        int r;

        *out = (struct hostfacts){ 0 };
        r = gpu_read(host_root, &f);
        if (r >= 0)
                r = kmod_read(host_root, &f);
        if (r >= 0)
                r = nccl_lib_find(host_root, &f);
        if (r >= 0)
                r = memlock_read_login(host_root, &f);
        if (r >= 0)
                r = memlock_read_unit(host_root, &f);
        if (r < 0) {
                hostfacts_free(&f);
                return r;
        }
        dmabuf_decide(host_root, &f);
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
        char machine[64];

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
             add_string(o, "path", f->nccl_path) && add_string(o, "version", f->nccl_version) &&
             add_string(o, "machine",
                        f->has_nccl && f->nccl_machine.machine
                                ? elf_machine_name(&f->nccl_machine, machine, sizeof(machine))
                                : "");
        ok = ok && (o = add_child(root, "memlock_login", json_object_new_object())) && add_memlock(o, f);
        if (!ok) {
                json_object_put(root);
                return NULL;
        }
        return root;
}
