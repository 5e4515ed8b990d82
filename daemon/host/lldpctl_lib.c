#include "lldpctl_lib.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/macro.h"

static struct lldpctl_lib lib;
static bool is_loaded;

int lldpctl_lib_load(const struct lldpctl_lib **ret, char *why, size_t why_size)
{
        struct lldpctl_lib next;
        const struct {
                const char *name;
                void **slot;
        } symbols[] = {
#define SYMBOL(field) { "lldpctl_" #field, (void **)&next.field }
                SYMBOL(new_name),          SYMBOL(release),        SYMBOL(last_error),
                SYMBOL(strerror),          SYMBOL(recv),           SYMBOL(watch_callback2),
                SYMBOL(get_local_chassis), SYMBOL(get_interfaces), SYMBOL(get_port),
                SYMBOL(atom_get),          SYMBOL(atom_get_str),   SYMBOL(atom_get_int),
                SYMBOL(atom_dec_ref),      SYMBOL(atom_iter),      SYMBOL(atom_iter_next),
                SYMBOL(atom_iter_value),
#undef SYMBOL
        };
        void *handle;

        if (is_loaded) {
                *ret = &lib;
                return 0;
        }
        handle = dlopen(LLDPCTL_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
                const char *e = dlerror();

                snprintf(why, why_size, "%s", e ? e : LLDPCTL_SONAME ": cannot be loaded");
                return -ENOENT;
        }
        for (size_t i = 0; i < ARRAY_SIZE(symbols); i++) {
                *symbols[i].slot = dlsym(handle, symbols[i].name);
                if (!*symbols[i].slot) {
                        snprintf(why, why_size, "%s has no %s", LLDPCTL_SONAME, symbols[i].name);
                        dlclose(handle);
                        return -ENOEXEC;
                }
        }
        /* Kept for the process: the watch may connect again at any time. */
        lib = next;
        is_loaded = true;
        *ret = &lib;
        return 0;
}
