#include "control.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/json_raw.h"
#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
#include "config.h"
#include "daemon/base/event.h"
#include "health.h"

static void format_time(time_t t, char *buf, size_t size)
{
        struct tm tm;

        gmtime_r(&t, &tm);
        strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static double uptime_sec(const struct control_context *ctx)
{
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (double)(now.tv_sec - ctx->started_monotonic.tv_sec) +
               (double)(now.tv_nsec - ctx->started_monotonic.tv_nsec) / 1e9;
}

/* State is saved while the directory is usable and every file's last save succeeded; otherwise
 * state_save_error names the file that failed last (null when the directory itself is not). */
static void add_state_saved(json_object *o, const struct control_context *ctx)
{
        const char *name = NULL;
        int r = ctx->store ? store_save_failure(ctx->store, &name) : 0;
        json_object *error = NULL;

        if (r < 0) {
                char path[PATH_MAX];

                snprintf(path, sizeof(path), "%s/%s", store_path(ctx->store), name);
                error = json_object_new_object();
                json_object_object_add(error, "file", json_object_new_string(path));
                json_object_object_add(error, "error", json_object_new_string(strerror(-r)));
        }
        json_object_object_add(o, "state_saved", json_object_new_boolean(ctx->store && r == 0));
        json_object_object_add(o, "state_save_error", error);
}

static json_object *status_without_uptime(struct control_context *ctx, json_object *health)
{
        const struct sparkd_config *config = *ctx->config;
        json_object *o, *files;
        char started[64];

        format_time(ctx->started_wall, started, sizeof(started));
        o = json_object_new_object();
        json_object_object_add(o, "node", json_object_new_string(config->node_name));
        json_object_object_add(o, "node_id", json_object_new_string(ctx->node_id));
        json_object_object_add(o, "version", json_object_new_string(SPARKD_VERSION));
        json_object_object_add(o, "started_at", json_object_new_string(started));
        json_object_object_add(o, "mode", json_object_new_string(enforce_mode_to_string(config->mode)));
        json_object_object_add(o, "config_path", json_object_new_string(config->path));
        json_object_object_add(o, "config_found", json_object_new_boolean(config->path_found));
        files = json_object_new_array();
        for (char **f = config->files_read; f && *f; f++)
                json_object_array_add(files, json_object_new_string(*f));
        json_object_object_add(o, "config_files", files);
        json_object_object_add(o, "reloads", json_object_new_int(*ctx->reloads));
        json_object_object_add(o, "socket", json_object_new_string(api_server_path(ctx->api)));
        json_object_object_add(o, "socket_activated",
                               json_object_new_boolean(api_server_is_activated(ctx->api)));
        json_object_object_add(o, "state_dir",
                               json_object_new_string(ctx->state_dir ? ctx->state_dir : config->state_dir));
        add_state_saved(o, ctx);
        json_object_object_add(o, "gid", gid_watch_to_json(ctx->gid_watch));
        json_object_object_add(o, "health", json_object_get(health));
        return o;
}

/* What the kept status text was made from: while all of it is the same, so is the text. */
static struct status_kept status_key_now(const struct control_context *ctx, json_object *health)
{
        struct status_kept key = {
                .health = health,
                .health_generation = ctx->health ? ctx->health->generation : 0,
                .gid_generation = gid_watch_generation(ctx->gid_watch),
                .reloads = *ctx->reloads,
                .config = *ctx->config,
        };

        key.store_result = ctx->store ? store_save_failure(ctx->store, &key.store_name) : 0;
        return key;
}

static bool status_key_same(const struct status_kept *a, const struct status_kept *b)
{
        return a->health == b->health && a->health_generation == b->health_generation &&
               a->gid_generation == b->gid_generation && a->reloads == b->reloads &&
               a->config == b->config && a->store_result == b->store_result &&
               a->store_name == b->store_name;
}

/* The status is asked for in loops by scripts and dashboards: all of it but the uptime is kept as
 * the text it is written as, and made again only when something under it moved (the health
 * line's doctor, the GID tables, a reload, a failed save). Built for each call it was twice the
 * cost of the API's cheapest answer, and 64 clients polling it had a p99 of 3 ms. A health line
 * made for one call only (no doctor kept) is never kept. */
static int method_status(struct api_request *req, json_object *params, void *userdata)
{
        struct control_context *ctx = userdata;
        json_object *health = health_of_node(ctx->health, ctx->links, ctx->peers, ctx->fabric);
        bool can_keep = ctx->health && health && health == ctx->health->line;
        struct status_kept key = status_key_now(ctx, health);
        _cleanup_free_ char *reply = NULL;
        const char *body;

        if (!can_keep || !ctx->status.text || !status_key_same(&key, &ctx->status)) {
                json_object *o = status_without_uptime(ctx, health);
                const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
                                                                             JSON_C_TO_STRING_NOSLASHESCAPE);
                char *copy = text ? strdup(text) : NULL;

                json_object_put(o);
                if (!copy) {
                        json_object_put(health);
                        api_request_reply_error(req, RPC_INTERNAL_ERROR, "out of memory", NULL);
                        return 0;
                }
                free(ctx->status.text);
                key.text = copy;
                ctx->status = key;
                if (!can_keep)
                        ctx->status.health = NULL; /* never the same as a later call's */
        }
        json_object_put(health);
        /* The kept text is an object, "{...}", never empty: the uptime goes in as its first member. */
        body = ctx->status.text + 1;
        if (asprintf(&reply, "{\"uptime_sec\":%.6f%s%s", uptime_sec(ctx), *body == '}' ? "" : ",", body) <
            0) {
                reply = NULL;
                api_request_reply_error(req, RPC_INTERNAL_ERROR, "out of memory", NULL);
                return 0;
        }
        api_request_reply(req, json_raw_take(TAKE_PTR(reply)));
        return 0;
}

void control_clear(struct control_context *ctx)
{
        free(ctx->status.text);
        ctx->status = (struct status_kept){ 0 };
}

static int method_version(struct api_request *req, json_object *params, void *userdata)
{
        json_object *o;

        o = json_object_new_object();
        json_object_object_add(o, "version", json_object_new_string(SPARKD_VERSION));
        api_request_reply(req, o);
        return 0;
}

static json_object *config_errors_to_json(const struct conf_errors *errors)
{
        json_object *list = json_object_new_array();

        for (size_t i = 0; i < errors->n; i++) {
                json_object *e = json_object_new_object();

                if (errors->v[i].file)
                        json_object_object_add(e, "file", json_object_new_string(errors->v[i].file));
                if (errors->v[i].line)
                        json_object_object_add(e, "line", json_object_new_int((int)errors->v[i].line));
                json_object_object_add(e, "message", json_object_new_string(errors->v[i].message));
                json_object_array_add(list, e);
        }
        return list;
}

static int method_reload(struct api_request *req, json_object *params, void *userdata)
{
        const struct control_context *ctx = userdata;
        const struct sparkd_config *config;
        struct conf_errors errors;
        json_object *o;
        int r;

        r = ctx->reload(ctx->reload_userdata, &errors);
        if (r < 0) {
                json_object *data = json_object_new_object();

                json_object_object_add(data, "errors", config_errors_to_json(&errors));
                api_request_reply_error(req, RPC_CONFIG_INVALID,
                                        "config has errors; the running config is kept", data);
                conf_errors_clear(&errors);
                return 0;
        }
        conf_errors_clear(&errors);
        config = *ctx->config;
        o = json_object_new_object();
        json_object_object_add(o, "config_path", json_object_new_string(config->path));
        json_object_object_add(o, "config_found", json_object_new_boolean(config->path_found));
        json_object_object_add(o, "reloads", json_object_new_int(*ctx->reloads));
        api_request_reply(req, o);
        return 0;
}

static int check_event_names(json_object *list, char *expected, size_t size)
{
        enum event_type type;
        size_t len;

        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *item = json_object_array_get_idx(list, i);

                if (json_object_is_type(item, json_type_string) &&
                    event_type_from_string(json_object_get_string(item), &type) == 0)
                        continue;
                len = (size_t)snprintf(expected, size, "an array of event names (");
                for (int t = 0; t < _EVENT_TYPE_MAX && len < size; t++)
                        len += (size_t)snprintf(expected + len, size - len, "%s%s", t ? ", " : "",
                                                event_type_to_string((enum event_type)t));
                if (len < size)
                        snprintf(expected + len, size - len, ")");
                return -EINVAL;
        }
        return 0;
}

static int method_subscribe(struct api_request *req, json_object *params, void *userdata)
{
        json_object *list = NULL, *o, *types_json;
        char **types = NULL;
        size_t n;

        if (params)
                json_object_object_get_ex(params, "events", &list);
        types_json = json_object_new_array();
        if (list) {
                n = json_object_array_length(list);
                types = calloc(n + 1, sizeof(char *));
                if (!types) {
                        json_object_put(types_json);
                        return -ENOMEM;
                }
                for (size_t i = 0; i < n; i++) {
                        enum event_type type = 0;

                        (void)event_type_from_string(
                                json_object_get_string(json_object_array_get_idx(list, i)), &type);
                        types[i] = strdup(event_type_to_string(type));
                        json_object_array_add(types_json, json_object_new_string(types[i]));
                }
        } else {
                for (int t = 0; t < _EVENT_TYPE_MAX; t++)
                        json_object_array_add(types_json, json_object_new_string(
                                                                  event_type_to_string((enum event_type)t)));
        }
        api_request_subscribe(req, types);
        o = json_object_new_object();
        json_object_object_add(o, "events", types_json);
        api_request_reply(req, o);
        return 0;
}

static json_object *throughput_to_json(const struct port_counter_sample *s)
{
        json_object *o = json_object_new_object();

        json_object_object_add(o, "rx_gbps", json_object_new_double(s->gbps[0]));
        json_object_object_add(o, "tx_gbps", json_object_new_double(s->gbps[1]));
        json_object_object_add(o, "peak_rx_gbps", json_object_new_double(s->peak_gbps[0]));
        json_object_object_add(o, "peak_tx_gbps", json_object_new_double(s->peak_gbps[1]));
        return o;
}

/* Each link's throughput from the counter watch's last look; null where it has none. */
static void add_throughput(json_object *links, const struct counter_watch *watch)
{
        for (size_t i = 0; i < json_object_array_length(links); i++) {
                json_object *l = json_object_array_get_idx(links, i), *name;
                const struct port_counter_sample *s = NULL;

                if (watch && json_object_object_get_ex(l, "name", &name))
                        s = port_counter_list_find_netdev(counter_watch_last(watch),
                                                          json_object_get_string(name));
                json_object_object_add(l, "throughput",
                                       s && s->has[PORT_COUNTER_RX_BYTES] ? throughput_to_json(s) : NULL);
        }
}

static int method_links(struct api_request *req, json_object *params, void *userdata)
{
        const struct control_context *ctx = userdata;
        const struct sparkd_config *config = *ctx->config;
        json_object *o, *links;

        o = json_object_new_object();
        json_object_object_add(o, "mode", json_object_new_string(enforce_mode_to_string(config->mode)));
        json_object_object_add(o, "mtu_wanted", json_object_new_int((int)config->fabric_mtu));
        links = links_to_json(ctx->links);
        add_throughput(links, ctx->counter_watch);
        json_object_object_add(o, "links", links);
        json_object_object_add(o, "sysctls", sysctl_keeper_to_json(ctx->sysctls));
        api_request_reply(req, o);
        return 0;
}

static int method_peers(struct api_request *req, json_object *params, void *userdata)
{
        const struct control_context *ctx = userdata;
        json_object *o;

        o = peers_to_json(ctx->peers);
        api_request_reply(req, o);
        return 0;
}

static int method_metrics(struct api_request *req, json_object *params, void *userdata)
{
        const struct control_context *ctx = userdata;
        _cleanup_free_ char *text = NULL;
        json_object *o;

        text = metrics_writer_text(ctx->metrics);
        if (!text)
                return -ENOMEM;
        o = json_object_new_object();
        json_object_object_add(o, "text", json_object_new_string(text));
        api_request_reply(req, o);
        return 0;
}

static const struct api_param subscribe_params[] = {
        { .name = "events", .type = API_PARAM_ARRAY, .check = check_event_names },
        {},
};

/* clang-format off */
static const struct api_method control_methods[] = {
        { "status",    method_status,    false },
        { "version",   method_version,   false },
        { "reload",    method_reload,    true },
        { "subscribe", method_subscribe, false, subscribe_params },
        { "links",     method_links,     false },
        { "peers",     method_peers,     false },
        { "metrics",   method_metrics,   false },
};
/* clang-format on */

int control_register(struct control_context *context)
{
        return api_server_add_methods(context->api, control_methods, ARRAY_SIZE(control_methods), context);
}
