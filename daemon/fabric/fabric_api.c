/* The API methods about the fabric: fabric (the inventory), env (the NCCL environment) and
 * doctor (the checks). Each gathers the facts afresh: sysfs reads are cheap and the answer is
 * then never older than the question. */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "common/jsonrpc.h"
#include "common/macro.h"
#include "daemon/daemon.h"
#include "doctor.h"
#include "envgen.h"
#include "inventory/fabric.h"

static void add_address(const char *ifname, const char *address, void *userdata)
{
        (void)fabric_facts_add_address(userdata, ifname, address);
}

static const char *ipv4_of(const char *ifname, char *buf, size_t size, void *userdata)
{
        return fabric_ipv4_of(userdata, ifname, buf, size);
}

int sparkd_gid_table(void *userdata, struct gid_table *out)
{
        struct sparkd *d = userdata;
        struct fabric_facts f = { 0 };
        int r;

        /* Only what the GID choice depends on: the RDMA tables and the netdevs' addresses. */
        r = rdma_scan(d->config->sysfs_root, false, &f.rdma);
        if (r < 0)
                return r;
        links_foreach_address(d->links, add_address, &f);
        r = gid_table_build(&f.rdma, ipv4_of, &f, out);
        fabric_facts_free(&f);
        return r;
}

int sparkd_fabric_facts(struct sparkd *d, struct fabric_facts *f)
{
        /* libibverbs sees only the running system: ask it only when that is what is read. */
        bool is_real_host = strcmp(d->config->host_root, "/") == 0;
        struct rlimit rl;
        json_object *sysctls;
        int r;

        r = fabric_facts_read(d->config->host_root, d->config->fabric_patterns, is_real_host, f);
        if (r < 0)
                return r;
        if (d->aer_watch && aer_watch_observe(d->aer_watch, &f->rdma) < 0) {
                fabric_facts_free(f);
                return -ENOMEM;
        }
        links_foreach_address(d->links, add_address, f);
        /* The other netdevs' addresses too: where the fabric has none, envgen pins socket traffic
         * to the management interface by them. */
        for (size_t i = 0; i < f->hostifs.n; i++)
                if (!fabric_has_address(f, f->hostifs.v[i].name))
                        links_foreach_address_of(d->links, f->hostifs.v[i].name, add_address, f);
        if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0)
                f->memlock_daemon =
                        rl.rlim_cur == RLIM_INFINITY ? HOSTFACTS_UNLIMITED : (uint64_t)rl.rlim_cur;
        f->mtu_wanted = d->config->fabric_mtu;
        sysctls = sysctl_keeper_to_json(d->sysctls);
        for (size_t i = 0; i < json_object_array_length(sysctls); i++) {
                json_object *s = json_object_array_get_idx(sysctls, i), *name, *wanted, *actual;

                if (json_object_object_get_ex(s, "name", &name) &&
                    json_object_object_get_ex(s, "wanted", &wanted)) {
                        json_object_object_get_ex(s, "actual", &actual);
                        (void)fabric_facts_add_sysctl(f, json_object_get_string(name),
                                                      json_object_get_string(wanted),
                                                      actual ? json_object_get_string(actual) : NULL);
                }
        }
        json_object_put(sysctls);
        f->peers = peers_to_json(d->peers);
        f->rail_verdicts = probes_rail_verdicts(d->probes);
        return 0;
}

static int method_fabric(struct api_request *req, json_object *params, void *userdata)
{
        struct fabric_facts f;
        int r;

        r = sparkd_fabric_facts(userdata, &f);
        if (r < 0)
                return r;
        api_request_reply(req, fabric_facts_to_json(&f));
        fabric_facts_free(&f);
        return 0;
}

static int check_env_mode(json_object *value, char *expected, size_t size)
{
        enum env_mode mode;

        if (env_mode_from_string(json_object_get_string(value), &mode) == 0)
                return 0;
        snprintf(expected, size, "one of %s, %s, %s", env_mode_to_string(ENV_MODE_AUTO),
                 env_mode_to_string(ENV_MODE_SAFE), env_mode_to_string(ENV_MODE_DMABUF));
        return -EINVAL;
}

static int method_env(struct api_request *req, json_object *params, void *userdata)
{
        struct sparkd *d = userdata;
        enum env_mode mode = ENV_MODE_AUTO;
        const char *mode_s = NULL;
        struct fabric_facts f;
        json_object *o;
        int r;

        if (jsonrpc_param_string(params, "mode", &mode_s) > 0)
                (void)env_mode_from_string(mode_s, &mode);
        /* A change not seen yet is logged first; this environment then matches the table. */
        gid_watch_check(d->gid_watch);
        r = sparkd_fabric_facts(d, &f);
        if (r < 0)
                return r;
        gid_watch_env_served(d->gid_watch);
        o = envgen_build(&f, mode);
        json_object_object_add(o, "node", json_object_new_string(d->config->node_name));
        api_request_reply(req, o);
        fabric_facts_free(&f);
        return 0;
}

static int method_doctor(struct api_request *req, json_object *params, void *userdata)
{
        struct fabric_facts f;
        int r;

        r = sparkd_fabric_facts(userdata, &f);
        if (r < 0)
                return r;
        api_request_reply(req, doctor_run(&f));
        fabric_facts_free(&f);
        return 0;
}

static const struct api_param env_params[] = {
        { .name = "mode", .type = API_PARAM_STRING, .check = check_env_mode },
        {},
};

static const struct api_method fabric_methods[] = {
        { "fabric", method_fabric, false },
        { "env", method_env, false, env_params },
        { "doctor", method_doctor, false },
};

int fabric_api_register(struct sparkd *d)
{
        return api_server_add_methods(d->api, fabric_methods, ARRAY_SIZE(fabric_methods), d);
}
