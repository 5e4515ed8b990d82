/* The job methods' inputs: the plan from the cluster view's nodes, this node's addresses section,
 * and an env-check request checked against its bounds. */
#include "job_api.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/file_read.h"
#include "common/macro.h"
#include "daemon/host/route_lookup.h"
#include "doctor.h"
#include "inventory/fabric.h"
#include "inventory/host_path.h"
#include "job_nodes.h"
#include "job_plan.h"

json_object *job_api_addresses(const struct fabric_facts *f, const struct mgmt_address *management)
{
        json_object *o = json_object_new_object(), *list = json_object_new_array(), *m = NULL;

        for (size_t i = 0; i < f->n_addresses; i++) {
                const struct fabric_address *a = &f->addresses[i];
                const struct rdma_port *port = rdma_find_port_by_netdev(&f->rdma, a->ifname, NULL);
                json_object *e;

                /* IPv4 only, as NCCL's bootstrap and the frameworks announce it here, and only on
                 * fabric netdevs: not the loopback, not a link-local address. */
                if (!strchr(a->address, '.') || strchr(a->address, ':') ||
                    !netif_list_find(&f->netifs, a->ifname) || strncmp(a->address, "127.", 4) == 0 ||
                    strncmp(a->address, "169.254.", 8) == 0)
                        continue;
                e = json_object_new_object();
                json_object_object_add(e, "ifname", json_object_new_string(a->ifname));
                json_object_object_add(e, "address", json_object_new_string(a->address));
                json_object_object_add(e, "rdma",
                                       json_object_new_boolean(port && port->state == RDMA_PORT_ACTIVE));
                json_object_array_add(list, e);
        }
        if (management && management->address[0]) {
                m = json_object_new_object();
                json_object_object_add(m, "ifname", json_object_new_string(management->ifname));
                json_object_object_add(m, "address", json_object_new_string(management->address));
        }
        json_object_object_add(o, "management", m);
        json_object_object_add(o, "fabric", list);
        return o;
}

/* This node alone, from facts read now: where no cluster view is known. */
static int add_self(const struct fabric_api_context *ctx, const struct fabric_facts *f,
                    struct job_nodes *nodes)
{
        struct job_node self = { .is_self = true };
        struct mgmt_address management;
        json_object *doctor = doctor_run(f), *addresses;

        if (mgmt_address_read("/proc/net/route", &management) < 0)
                management = (struct mgmt_address){ 0 };
        addresses = job_api_addresses(f, &management);
        snprintf(self.node_id, sizeof(self.node_id), "%s", ctx->node_id ? ctx->node_id : "self");
        snprintf(self.name, sizeof(self.name), "%s", ctx->sources->config->node_name);
        job_node_read_doctor(&self, doctor);
        job_node_read_addresses(&self, addresses);
        json_object_put(doctor);
        json_object_put(addresses);
        return job_nodes_add(nodes, &self);
}

json_object *job_api_plan(const struct fabric_api_context *ctx, const struct fabric_facts *f)
{
        _cleanup_(job_nodes_free) struct job_nodes nodes = { 0 };
        json_object *list = ctx->cluster_nodes ? ctx->cluster_nodes(ctx->cluster_nodes_userdata) : NULL;
        int r;

        r = list ? job_nodes_add_cluster(&nodes, list) : add_self(ctx, f, &nodes);
        json_object_put(list);
        if (r < 0)
                return NULL;
        for (size_t i = 0; i < nodes.n && ctx->name_is_shared; i++)
                nodes.v[i].is_name_shared =
                        ctx->name_is_shared(nodes.v[i].name, ctx->name_is_shared_userdata);
        return job_plan_build_on(&nodes, ctx->sources->config->cluster_head,
                                 ctx->sources->config->cluster_rendezvous);
}

/* Writes the refusal into why and gives -EINVAL. */
#define REFUSE(...) (snprintf(why, size, __VA_ARGS__), -EINVAL)

static int read_environ(json_object *environ, struct env_check_input *in, char *why, size_t size)
{
        int r;

        if (json_object_object_length(environ) > ENV_CHECK_MAX_VARIABLES)
                return REFUSE("env-check: \"environ\" has more than %d variables", ENV_CHECK_MAX_VARIABLES);
        json_object_object_foreach(environ, name, value) {
                const char *v;

                if (!json_object_is_type(value, json_type_string))
                        return REFUSE("env-check: \"environ\": %.64s must be a string", name);
                v = json_object_get_string(value);
                if (strlen(name) > ENV_CHECK_MAX_NAME || strlen(v) > ENV_CHECK_MAX_VALUE)
                        return REFUSE(
                                "env-check: \"environ\": %.64s: a name has at most %d bytes, a value %d",
                                name, ENV_CHECK_MAX_NAME, ENV_CHECK_MAX_VALUE);
                if (!env_check_is_relevant(name))
                        continue;
                if ((r = env_settings_add(&in->environ, name, v, "environment")) < 0)
                        return r;
        }
        return 0;
}

/* Bytes, or -1 for unlimited (RLIM_INFINITY). */
static int read_limit(json_object *memlock, const char *key, uint64_t *out, char *why, size_t size)
{
        json_object *v;
        int64_t n;

        if (!json_object_object_get_ex(memlock, key, &v) || !json_object_is_type(v, json_type_int))
                return REFUSE("env-check: \"memlock\" needs \"%s\": bytes, or -1 for unlimited", key);
        n = json_object_get_int64(v);
        if (n < -1)
                return REFUSE("env-check: \"memlock\".%s is %lld; expected bytes, or -1 for unlimited", key,
                              (long long)n);
        *out = n == -1 ? HOSTFACTS_UNLIMITED : (uint64_t)n;
        return 0;
}

/*
 * The caller's own NCCL config file comes as text in the request: the client read it with the
 * caller's permissions, as NCCL in its job will. The daemon never opens a path a caller names
 * or owns (a symlink in a home directory would let it read any file as root).
 */
static int read_user_conf(json_object *conf, struct env_check_input *in, char *why, size_t size)
{
        json_object *path, *text;
        int r;

        if (!json_object_object_get_ex(conf, "path", &path) ||
            !json_object_is_type(path, json_type_string) ||
            !json_object_object_get_ex(conf, "text", &text) || !json_object_is_type(text, json_type_string))
                return REFUSE("env-check: \"nccl_conf\" needs \"path\" and \"text\", both strings");
        if (json_object_get_string_len(text) > ENV_CHECK_MAX_FILE_BYTES ||
            json_object_get_string_len(path) > 256)
                return REFUSE("env-check: \"nccl_conf\": the text has at most %d bytes, the path 256",
                              ENV_CHECK_MAX_FILE_BYTES);
        r = env_check_parse_conf(json_object_get_string(text), json_object_get_string(path), &in->files);
        if (r == -E2BIG)
                return REFUSE("env-check: \"nccl_conf\".text has more than %d lines",
                              ENV_CHECK_MAX_FILE_LINES);
        return r;
}

/* /etc/nccl.conf, read here under the host root: a missing or unreadable file sets nothing, as
 * for NCCL. */
static int read_system_conf(const struct fabric_api_context *ctx, struct env_check_input *in)
{
        _cleanup_free_ char *text = NULL;
        char path[PATH_MAX], why[256];
        size_t len;
        int r;

        if (host_path(path, sizeof(path), ctx->sources->config->host_root, "etc/nccl.conf") < 0)
                return 0;
        if (file_read_regular(AT_FDCWD, path, 0, ENV_CHECK_MAX_FILE_BYTES, &text, &len, why, sizeof(why)) <
            0)
                return 0;
        r = env_check_parse_conf(text, "/etc/nccl.conf", &in->files);
        return r == -E2BIG ? 0 : r;
}

/* Each rendezvous variable whose host is an IPv4 address, looked up in this node's routes. */
static void look_up_routes(struct env_check_input *in)
{
        static const char *const names[] = { "MASTER_ADDR", "RAY_ADDRESS", "DIST_INIT_ADDR" };

        for (size_t i = 0; i < in->environ.n && in->n_routes < ENV_CHECK_MAX_ROUTES; i++) {
                const struct env_setting *s = &in->environ.v[i];
                struct env_check_route *r = &in->routes[in->n_routes];
                struct route_lookup found;
                bool is_rendezvous = false;
                size_t len = strcspn(s->value, ":");

                for (size_t k = 0; k < ARRAY_SIZE(names); k++)
                        is_rendezvous = is_rendezvous || strcmp(s->name, names[k]) == 0;
                if (!is_rendezvous || len == 0 || len >= sizeof(r->host))
                        continue;
                *r = (struct env_check_route){ 0 };
                snprintf(r->name, sizeof(r->name), "%s", s->name);
                memcpy(r->host, s->value, len);
                r->error = route_lookup(r->host, &found);
                if (r->error == -EINVAL)
                        continue; /* a host name: resolving it could block */
                snprintf(r->source, sizeof(r->source), "%s", found.source);
                snprintf(r->ifname, sizeof(r->ifname), "%s", found.ifname);
                in->n_routes++;
        }
}

int job_api_env_check_input(const struct fabric_api_context *ctx, json_object *params,
                            struct env_check_input *in, char *why, size_t size)
{
        json_object *environ, *memlock, *conf;
        int r;

        if (params && json_object_object_get_ex(params, "environ", &environ) &&
            (r = read_environ(environ, in, why, size)) < 0)
                return r;
        look_up_routes(in);
        if (params && json_object_object_get_ex(params, "memlock", &memlock)) {
                if ((r = read_limit(memlock, "soft", &in->memlock_soft, why, size)) < 0 ||
                    (r = read_limit(memlock, "hard", &in->memlock_hard, why, size)) < 0)
                        return r;
                in->has_memlock = true;
        }
        if (params && json_object_object_get_ex(params, "nccl_conf", &conf) &&
            (r = read_user_conf(conf, in, why, size)) < 0)
                return r;
        return read_system_conf(ctx, in);
}
