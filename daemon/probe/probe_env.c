#include "probe_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "inventory/rdma.h"

/* Sets name to value, replacing an earlier setting of it, and records where it came from. */
static int env_set(struct probe_env *e, const char *name, size_t name_len, const char *value,
                   const char *source)
{
        json_object *vars, *v;
        char *entry;
        size_t n;

        if (asprintf(&entry, "%.*s=%s", (int)name_len, name, value) < 0)
                return -ENOMEM;
        json_object_object_get_ex(e->description, "variables", &vars);
        n = strv_length(e->entries);
        for (size_t i = 0; i < n; i++) {
                if (strncmp(e->entries[i], entry, name_len + 1) != 0)
                        continue;
                free(e->entries[i]);
                e->entries[i] = entry;
                v = json_object_array_get_idx(vars, i);
                json_object_object_add(v, "value", json_object_new_string(value));
                json_object_object_add(v, "source", json_object_new_string(source));
                return 0;
        }
        if (strv_push(&e->entries, entry) < 0) {
                free(entry);
                return -ENOMEM;
        }
        free(entry);
        v = json_object_new_object();
        json_object_object_add(v, "name", json_object_new_string_len(name, (int)name_len));
        json_object_object_add(v, "value", json_object_new_string(value));
        json_object_object_add(v, "source", json_object_new_string(source));
        json_object_array_add(vars, v);
        return 0;
}

static const char *get_string(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : NULL;
}

/* The interface that holds address, from the facts' address list. */
static const char *interface_of(const struct fabric_facts *f, const char *address)
{
        size_t len = address ? strlen(address) : 0;

        for (size_t i = 0; len && i < f->n_addresses; i++) {
                const char *a = f->addresses[i].address;

                if (strncmp(a, address, len) == 0 && (a[len] == '/' || a[len] == '\0'))
                        return f->addresses[i].ifname;
        }
        return NULL;
}

int probe_env_build(const struct fabric_facts *f, enum env_mode mode, const char *local_address,
                    const char *const *overrides, size_t n_overrides, struct probe_env *out)
{
        struct probe_env e = { .description = json_object_new_object() };
        json_object *generated = envgen_build(f, mode), *vars = NULL;
        char rdma[512] = "", value[IF_NAMESIZE + 2];
        const char *ifname = interface_of(f, local_address);
        int r = 0;

        e.entries = calloc(1, sizeof(char *));
        if (!e.entries || !e.description || !generated) {
                r = -ENOMEM;
                goto out;
        }
        json_object_object_add(e.description, "mode",
                               json_object_new_string(get_string(generated, "mode") ?: "none"));
        json_object_object_add(e.description, "mode_reason",
                               json_object_new_string(get_string(generated, "mode_reason")
                                                              ?: get_string(generated, "reason") ?: ""));
        json_object_object_add(e.description, "variables", json_object_new_array());
        json_object_object_get_ex(generated, "variables", &vars);
        for (size_t i = 0; vars && i < json_object_array_length(vars) && r >= 0; i++) {
                json_object *v = json_object_array_get_idx(vars, i);
                const char *name = get_string(v, "name"), *val = get_string(v, "value");

                if (name && val)
                        r = env_set(&e, name, strlen(name), val, "sparkc env");
        }
        /* NCCL matches interface names by prefix unless the list starts with "=". */
        if (r >= 0 && ifname) {
                snprintf(value, sizeof(value), "=%s", ifname);
                r = env_set(&e, "NCCL_SOCKET_IFNAME", strlen("NCCL_SOCKET_IFNAME"), value, "probe");
        }
        for (size_t i = 0; i < f->rdma.n; i++)
                for (size_t p = 0; p < f->rdma.v[i].n_ports; p++)
                        if (f->rdma.v[i].ports[p].state == RDMA_PORT_ACTIVE &&
                            !strstr(rdma, f->rdma.v[i].name)) {
                                size_t used = strlen(rdma);

                                snprintf(rdma + used, sizeof(rdma) - used, "%s%s", used ? "," : "",
                                         f->rdma.v[i].name);
                        }
        if (r >= 0)
                r = env_set(&e, PROBE_ENV_UNIFIED_MEMORY, strlen(PROBE_ENV_UNIFIED_MEMORY),
                            f->host.has_unified_memory ? "1" : "0", "probe");
        if (r >= 0)
                r = env_set(&e, PROBE_ENV_RDMA_DEVICES, strlen(PROBE_ENV_RDMA_DEVICES), rdma, "probe");
        for (size_t i = 0; i < n_overrides && r >= 0; i++) {
                const char *eq = strchr(overrides[i], '=');

                if (eq)
                        r = env_set(&e, overrides[i], (size_t)(eq - overrides[i]), eq + 1, "override");
        }
out:
        json_object_put(generated);
        if (r < 0) {
                probe_env_free(&e);
                return r;
        }
        *out = e;
        return 0;
}

void probe_env_free(struct probe_env *e)
{
        strv_free(e->entries);
        json_object_put(e->description);
        *e = (struct probe_env){ 0 };
}

const char *probe_env_get(const struct probe_env *e, const char *name)
{
        size_t len = strlen(name);

        for (char **entry = e->entries; entry && *entry; entry++)
                if (strncmp(*entry, name, len) == 0 && (*entry)[len] == '=')
                        return *entry + len + 1;
        return NULL;
}
