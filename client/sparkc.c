/* sparkc: the command-line client of sparkd's control API. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "common/cluster_key.h"
#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "config.h"
#include "report.h"
#include "rpc.h"

enum {
        EXIT_OK = 0,
        EXIT_DAEMON_ERROR = 1,
        EXIT_UNREACHABLE = 2,
};

struct command {
        const char *name;
        const char *summary;
        int (*run)(const struct client_options *o, int argc, char **argv);
};

static const struct command commands[];

/* `sparkc COMMAND --help` answers for that command without asking the daemon. */
static bool wants_help(int argc, char **argv)
{
        for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
                if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
                        return true;
        return false;
}

static void print_help(void)
{
        printf("Usage: sparkc [OPTION]... COMMAND [ARG]...\n"
               "Ask the local sparkd about the node and its fabric.\n"
               "\n"
               "Options:\n"
               "  -s, --socket=PATH   sparkd's socket (default $%s, else %s)\n"
               "  -j, --json          print the daemon's JSON result as it is\n"
               "  -t, --timeout=SEC   how long to wait for an answer (default 10)\n"
               "  -h, --help          show this help\n"
               "      --version       show the client's version\n"
               "\n"
               "Commands:\n",
               SPARKD_SOCKET_ENV, SPARKD_SOCKET_PATH);
        for (const struct command *c = commands; c->name; c++)
                printf("  %-18s  %s\n", c->name, c->summary);
        printf("\nExit status: 0 success, 1 the daemon answered with an error, 2 the daemon could not be "
               "reached.\n");
}

static int connect_or_explain(const struct client_options *o, struct rpc_client **c)
{
        int r = rpc_connect(o->socket_path, o->timeout_ms, c);
        char audience[160];

        if (r < 0) {
                fprintf(stderr, "sparkc: cannot reach sparkd at %s: %s\n", o->socket_path, strerror(-r));
                if (r == -ENOENT || r == -ECONNREFUSED)
                        fprintf(stderr,
                                "sparkc: is sparkd running? (systemctl status sparkd; or use --socket or "
                                "$%s)\n",
                                SPARKD_SOCKET_ENV);
                else if (r == -EACCES &&
                         rpc_socket_audience(o->socket_path, audience, sizeof(audience)) == 0)
                        fprintf(stderr,
                                "sparkc: the socket is for %s (socket_mode and socket_group in sparkd's "
                                "config)\n",
                                audience);
                else if (r == -EACCES)
                        fprintf(stderr, "sparkc: the socket is for root and the group socket_group names in "
                                        "sparkd's config\n");
                return -EXIT_UNREACHABLE;
        }
        return 0;
}

/* Calls one method. Returns 0 with the response, or -EXIT_* after saying what went wrong. */
static int call(const struct client_options *o, const char *method, json_object *params,
                struct jsonrpc_response *resp, struct rpc_client **keep)
{
        struct rpc_client *c = NULL;
        int r;

        r = connect_or_explain(o, &c);
        if (r < 0) {
                json_object_put(params);
                return r;
        }
        r = rpc_call(c, method, params, resp);
        if (r < 0) {
                if (r == -ETIMEDOUT)
                        fprintf(stderr, "sparkc: sparkd at %s did not answer %s within %d s\n",
                                o->socket_path, method, o->timeout_ms / 1000);
                else
                        fprintf(stderr, "sparkc: %s: lost the connection to sparkd at %s: %s\n", method,
                                o->socket_path, strerror(-r));
                rpc_close(c);
                return -EXIT_UNREACHABLE;
        }
        if (resp->error_message) {
                fprintf(stderr, "sparkc: %s: %s (error %d)\n", method, resp->error_message,
                        resp->error_code);
                jsonrpc_response_done(resp);
                rpc_close(c);
                return -EXIT_DAEMON_ERROR;
        }
        if (keep)
                *keep = c;
        else
                rpc_close(c);
        return 0;
}

void client_print_json(json_object *obj)
{
        printf("%s\n",
               json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                           JSON_C_TO_STRING_NOSLASHESCAPE));
}

const char *client_get_string(json_object *obj, const char *key, const char *fallback)
{
        json_object *v;

        if (json_object_object_get_ex(obj, key, &v) && json_object_is_type(v, json_type_string))
                return json_object_get_string(v);
        return fallback;
}

static bool get_bool(json_object *obj, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(obj, key, &v) && json_object_get_boolean(v);
}

static double get_double(json_object *obj, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(obj, key, &v) ? json_object_get_double(v) : 0.0;
}

static int get_int(json_object *obj, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(obj, key, &v) ? json_object_get_int(v) : 0;
}

static int no_args(const char *name, int argc)
{
        if (argc > 1) {
                fprintf(stderr, "sparkc: %s takes no arguments\n", name);
                return -EINVAL;
        }
        return 0;
}

/* The GID table moved since `sparkc env` was last asked: jobs started before may fail. */
static void print_env_changed(json_object *status)
{
        json_object *gid;
        const char *at;

        if (!json_object_object_get_ex(status, "gid", &gid) ||
            !(at = client_get_string(gid, "env_changed_at", NULL)))
                return;
        printf("env changed %s: %s; NCCL jobs started before then may fail (\"GID table changed\"); "
               "`sparkc env` gives the new environment\n",
               at, client_get_string(gid, "env_changed_reason", "?"));
}

static int cmd_status(const struct client_options *o, int argc, char **argv)
{
        struct jsonrpc_response resp;
        json_object *s;
        char uptime[64];
        int r;

        if (no_args("status", argc) < 0)
                return EXIT_DAEMON_ERROR;
        r = call(o, "status", NULL, &resp, NULL);
        if (r < 0)
                return -r;
        s = resp.result;
        if (o->json) {
                client_print_json(s);
        } else {
                format_duration_sec((uint64_t)get_double(s, "uptime_sec"), uptime, sizeof(uptime));
                printf("node        %s\n", client_get_string(s, "node", "?"));
                printf("node id     %s\n", client_get_string(s, "node_id", "?"));
                printf("version     %s (api %d)\n", client_get_string(s, "version", "?"),
                       get_int(s, "api_version"));
                printf("uptime      %s (since %s)\n", uptime, client_get_string(s, "started_at", "?"));
                printf("mode        %s\n", client_get_string(s, "mode", "?"));
                printf("config      %s%s\n", client_get_string(s, "config_path", "?"),
                       get_bool(s, "config_found") ? "" : " (not found: built-in defaults)");
                printf("socket      %s%s\n", client_get_string(s, "socket", "?"),
                       get_bool(s, "socket_activated") ? " (from systemd)" : "");
                printf("state dir   %s%s\n", client_get_string(s, "state_dir", "?"),
                       get_bool(s, "state_saved") ? "" : " (unusable: nothing is saved)");
                print_env_changed(s);
        }
        jsonrpc_response_done(&resp);
        return EXIT_OK;
}

static int cmd_version(const struct client_options *o, int argc, char **argv)
{
        struct jsonrpc_response resp;
        int r;

        if (no_args("version", argc) < 0)
                return EXIT_DAEMON_ERROR;
        r = call(o, "version", NULL, &resp, NULL);
        if (r < 0)
                return -r;
        if (o->json)
                client_print_json(resp.result);
        else
                printf("sparkc %s\nsparkd %s (api %d)\n", SPARKD_VERSION,
                       client_get_string(resp.result, "version", "?"), get_int(resp.result, "api_version"));
        jsonrpc_response_done(&resp);
        return EXIT_OK;
}

static void print_config_errors(json_object *data)
{
        json_object *errors;

        if (!data || !json_object_object_get_ex(data, "errors", &errors) ||
            !json_object_is_type(errors, json_type_array))
                return;
        for (size_t i = 0; i < json_object_array_length(errors); i++) {
                json_object *e = json_object_array_get_idx(errors, i);
                int line = get_int(e, "line");

                if (line > 0)
                        fprintf(stderr, "  %s:%d: %s\n", client_get_string(e, "file", "?"), line,
                                client_get_string(e, "message", "?"));
                else
                        fprintf(stderr, "  %s%s%s\n", client_get_string(e, "file", ""),
                                json_object_object_get_ex(e, "file", NULL) ? ": " : "",
                                client_get_string(e, "message", "?"));
        }
}

static int cmd_reload(const struct client_options *o, int argc, char **argv)
{
        struct rpc_client *c = NULL;
        struct jsonrpc_response resp;
        int r;

        if (no_args("reload", argc) < 0)
                return EXIT_DAEMON_ERROR;
        r = connect_or_explain(o, &c);
        if (r < 0)
                return -r;
        r = rpc_call(c, "reload", NULL, &resp);
        rpc_close(c);
        if (r < 0) {
                fprintf(stderr, "sparkc: reload: no answer from sparkd at %s: %s\n", o->socket_path,
                        strerror(-r));
                return EXIT_UNREACHABLE;
        }
        if (resp.error_message) {
                fprintf(stderr, "sparkc: reload: %s (error %d)\n", resp.error_message, resp.error_code);
                print_config_errors(resp.error_data);
                jsonrpc_response_done(&resp);
                return EXIT_DAEMON_ERROR;
        }
        if (o->json)
                client_print_json(resp.result);
        else
                printf("config reloaded from %s%s\n", client_get_string(resp.result, "config_path", "?"),
                       get_bool(resp.result, "config_found") ? "" : " (not found: built-in defaults)");
        jsonrpc_response_done(&resp);
        return EXIT_OK;
}

static void print_event(json_object *ev)
{
        json_object *fields;

        printf("%s  %-18s %s", client_get_string(ev, "time", "?"), client_get_string(ev, "event", "?"),
               client_get_string(ev, "message", ""));
        if (json_object_object_get_ex(ev, "fields", &fields) &&
            json_object_is_type(fields, json_type_object)) {
                json_object_object_foreach(fields, key, val)
                        printf(" %s=%s", key, json_object_get_string(val));
        }
        printf("\n");
}

static int cmd_watch(const struct client_options *o, int argc, char **argv)
{
        struct rpc_client *c = NULL;
        struct jsonrpc_response resp;
        json_object *params = NULL;
        int r;

        if (argc > 1) {
                json_object *types = json_object_new_array();

                for (int i = 1; i < argc; i++)
                        json_object_array_add(types, json_object_new_string(argv[i]));
                params = json_object_new_object();
                json_object_object_add(params, "events", types);
        }
        r = call(o, "subscribe", params, &resp, &c);
        if (r < 0)
                return -r;
        jsonrpc_response_done(&resp);
        /* On stderr even with --json: scripts wait for this line to know the stream is live. */
        fprintf(stderr, "watching sparkd at %s; Ctrl-C stops\n", o->socket_path);
        for (;;) {
                r = rpc_read_message(c, -1, &resp);
                if (r < 0)
                        break;
                if (resp.method && strcmp(resp.method, "event") == 0 && resp.params) {
                        if (o->json)
                                printf("%s\n", json_object_to_json_string_ext(
                                                       resp.params, JSON_C_TO_STRING_PLAIN |
                                                                            JSON_C_TO_STRING_NOSLASHESCAPE));
                        else
                                print_event(resp.params);
                        fflush(stdout);
                }
                jsonrpc_response_done(&resp);
        }
        rpc_close(c);
        if (r == -EINTR)
                return EXIT_OK;
        fprintf(stderr, "sparkc: watch: sparkd at %s went away: %s\n", o->socket_path,
                r == -ECONNRESET ? "connection closed" : strerror(-r));
        return EXIT_UNREACHABLE;
}

static void print_link_row(json_object *l)
{
        json_object *drift = NULL, *addrs = NULL;
        char mtu[32], speed[32], state[48], notes[256] = "";
        json_object *v;
        int64_t mbps = 0;
        size_t used = 0;

        if (json_object_object_get_ex(l, "mtu_wanted", &v) && v)
                snprintf(mtu, sizeof(mtu), "%d/%d", get_int(l, "mtu"), json_object_get_int(v));
        else
                snprintf(mtu, sizeof(mtu), "%d/-", get_int(l, "mtu"));
        if (json_object_object_get_ex(l, "speed_mbps", &v) && v)
                mbps = json_object_get_int64(v);
        if (mbps >= 1000)
                snprintf(speed, sizeof(speed), "%lldG", (long long)(mbps / 1000));
        else if (mbps > 0)
                snprintf(speed, sizeof(speed), "%lldM", (long long)mbps);
        else
                snprintf(speed, sizeof(speed), "-");
        snprintf(state, sizeof(state), "%s%s",
                 get_bool(l, "admin_up") ? client_get_string(l, "operstate", "?") : "admin-down",
                 get_bool(l, "flapping") ? ",flapping" : "");
        if (json_object_object_get_ex(l, "drift", &drift) && json_object_array_length(drift) > 0) {
                used += (size_t)snprintf(notes + used, sizeof(notes) - used, "drift:");
                for (size_t i = 0; i < json_object_array_length(drift) && used < sizeof(notes); i++)
                        used += (size_t)snprintf(
                                notes + used, sizeof(notes) - used, " %s",
                                json_object_get_string(json_object_array_get_idx(drift, i)));
        }
        if (get_bool(l, "keep_down") && used < sizeof(notes))
                used += (size_t)snprintf(notes + used, sizeof(notes) - used, "%skept down",
                                         used ? "; " : "");
        if (json_object_object_get_ex(l, "addresses", &addrs) && json_object_array_length(addrs) > 0 &&
            used < sizeof(notes))
                used += (size_t)snprintf(notes + used, sizeof(notes) - used, "%s%s", used ? "; " : "",
                                         json_object_get_string(json_object_array_get_idx(addrs, 0)));
        printf("%-16s %-16s %-20s %-11s %-6s %6d %6d  %-20s %s\n", client_get_string(l, "name", "?"),
               client_get_string(l, "twin", "-"), state, mtu, speed, get_int(l, "flaps"),
               get_int(l, "corrections"), client_get_string(l, "last_change", "-"), notes);
}

static int cmd_links(const struct client_options *o, int argc, char **argv)
{
        struct jsonrpc_response resp;
        json_object *links = NULL, *sysctls = NULL;
        int r;

        if (no_args("links", argc) < 0)
                return EXIT_DAEMON_ERROR;
        r = call(o, "links", NULL, &resp, NULL);
        if (r < 0)
                return -r;
        if (o->json) {
                client_print_json(resp.result);
                jsonrpc_response_done(&resp);
                return EXIT_OK;
        }
        printf("mode %s\n\n", client_get_string(resp.result, "mode", "?"));
        json_object_object_get_ex(resp.result, "links", &links);
        if (!links || json_object_array_length(links) == 0) {
                printf("no fabric interfaces: no netdev is backed by an RDMA device and [fabric] interfaces "
                       "names "
                       "none\n");
        } else {
                printf("%-16s %-16s %-20s %-11s %-6s %6s %6s  %-20s %s\n", "IFACE", "TWIN", "STATE",
                       "MTU NOW/WANT", "SPEED", "FLAPS", "FIXES", "LAST CHANGE", "NOTES");
                for (size_t i = 0; i < json_object_array_length(links); i++)
                        print_link_row(json_object_array_get_idx(links, i));
        }
        json_object_object_get_ex(resp.result, "sysctls", &sysctls);
        if (sysctls && json_object_array_length(sysctls) > 0) {
                printf("\n%-32s %-24s %-24s %-10s %s\n", "SYSCTL", "NOW", "WANT", "STATE", "FIXES");
                for (size_t i = 0; i < json_object_array_length(sysctls); i++) {
                        json_object *s = json_object_array_get_idx(sysctls, i);

                        printf("%-32s %-24s %-24s %-10s %d\n", client_get_string(s, "name", "?"),
                               client_get_string(s, "actual", "?"), client_get_string(s, "wanted", "?"),
                               client_get_string(s, "state", "?"), get_int(s, "corrections"));
                }
        }
        jsonrpc_response_done(&resp);
        return EXIT_OK;
}

static int cmd_env(const struct client_options *o, int argc, char **argv)
{
        static const struct option options[] = {
                { "mode", required_argument, NULL, 'm' },
                { "format", required_argument, NULL, 'f' },
                {},
        };
        enum env_format format = ENV_FORMAT_SH;
        const char *mode = "auto";
        struct jsonrpc_response resp;
        json_object *params;
        int c, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, "m:f:", options, NULL)) >= 0) {
                switch (c) {
                case 'm':
                        if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "safe") != 0 &&
                            strcmp(optarg, "dmabuf") != 0) {
                                fprintf(stderr, "sparkc: env: --mode is auto, safe or dmabuf\n");
                                return EXIT_DAEMON_ERROR;
                        }
                        mode = optarg;
                        break;
                case 'f':
                        if (env_format_from_string(optarg, &format) < 0) {
                                fprintf(stderr, "sparkc: env: --format is sh, docker or systemd\n");
                                return EXIT_DAEMON_ERROR;
                        }
                        break;
                default:
                        fprintf(stderr, "usage: sparkc env [--mode auto|safe|dmabuf] [--format "
                                        "sh|docker|systemd]\n");
                        return EXIT_DAEMON_ERROR;
                }
        }
        params = json_object_new_object();
        json_object_object_add(params, "mode", json_object_new_string(mode));
        r = call(o, "env", params, &resp, NULL);
        if (r < 0)
                return -r;
        if (o->json) {
                json_object *found;

                client_print_json(resp.result);
                /* The same exit status as the text form: a script must not read "no fabric" as
                 * success. */
                if (!json_object_object_get_ex(resp.result, "fabric_found", &found) ||
                    !json_object_get_boolean(found))
                        r = -EXIT_DAEMON_ERROR;
        } else if (report_env(stdout, stderr, resp.result, format) < 0)
                r = -EXIT_DAEMON_ERROR;
        jsonrpc_response_done(&resp);
        return -r;
}

/* doctor follows the monitoring-plugin convention: 0 ok, 1 warning, 2 failure, 3 unknown. */
#define EXIT_DOCTOR_UNKNOWN 3

static int cmd_doctor(const struct client_options *o, int argc, char **argv)
{
        struct jsonrpc_response resp;
        json_object *status;
        int r;

        if (no_args("doctor", argc) < 0)
                return EXIT_DOCTOR_UNKNOWN;
        r = call(o, "doctor", NULL, &resp, NULL);
        if (r < 0)
                return EXIT_DOCTOR_UNKNOWN;
        if (o->json) {
                client_print_json(resp.result);
                r = 2;
                if (json_object_object_get_ex(resp.result, "status", &status))
                        r = strcmp(json_object_get_string(status), "ok") == 0     ? 0
                            : strcmp(json_object_get_string(status), "warn") == 0 ? 1
                                                                                  : 2;
        } else {
                r = report_doctor(stdout, resp.result);
        }
        jsonrpc_response_done(&resp);
        return r;
}

static int cmd_fabric(const struct client_options *o, int argc, char **argv)
{
        struct jsonrpc_response resp;
        json_object *rdma = NULL, *devices = NULL;
        int r;

        if (no_args("fabric", argc) < 0)
                return EXIT_DAEMON_ERROR;
        r = call(o, "fabric", NULL, &resp, NULL);
        if (r < 0)
                return -r;
        if (o->json) {
                client_print_json(resp.result);
                jsonrpc_response_done(&resp);
                return EXIT_OK;
        }
        json_object_object_get_ex(resp.result, "rdma", &rdma);
        if (rdma)
                json_object_object_get_ex(rdma, "devices", &devices);
        if (!devices || json_object_array_length(devices) == 0)
                printf("no RDMA device found\n");
        else
                printf("%-16s %-5s %-16s %-8s %-10s %-22s %-9s %-16s %s\n", "DEVICE", "PORT", "NETDEV",
                       "STATE", "PHYS", "RATE", "GID(v2)", "TWIN", "PCIE (MAX)");
        for (size_t i = 0; devices && i < json_object_array_length(devices); i++) {
                json_object *d = json_object_array_get_idx(devices, i), *ports = NULL, *pcie = NULL, *v;
                char link[64] = "-";

                json_object_object_get_ex(d, "ports", &ports);
                /* "32 GT/s x4", and what it could do when it trained lower. */
                if (json_object_object_get_ex(d, "pcie", &pcie) && pcie &&
                    json_object_object_get_ex(pcie, "speed_gts", &v) && v) {
                        double max_gts = 0;

                        snprintf(link, sizeof(link), "%g GT/s x%d", json_object_get_double(v),
                                 get_int(pcie, "width"));
                        if (json_object_object_get_ex(pcie, "max_speed_gts", &v) && v)
                                max_gts = json_object_get_double(v);
                        if (get_bool(pcie, "degraded"))
                                snprintf(link + strlen(link), sizeof(link) - strlen(link), " (%g GT/s x%d)",
                                         max_gts, get_int(pcie, "max_width"));
                }
                for (size_t p = 0; ports && p < json_object_array_length(ports); p++) {
                        json_object *port = json_object_array_get_idx(ports, p), *gid;
                        char gid_s[16] = "-";

                        if (json_object_object_get_ex(port, "roce_v2_ipv4_gid", &gid) && gid)
                                snprintf(gid_s, sizeof(gid_s), "%d", json_object_get_int(gid));
                        printf("%-16s %-5d %-16s %-8s %-10s %-22s %-9s %-16s %s\n",
                               client_get_string(d, "name", "?"), get_int(port, "port"),
                               client_get_string(port, "netdev", "-"), client_get_string(port, "state", "?"),
                               client_get_string(port, "phys_state", "?"),
                               client_get_string(port, "rate", "?"), gid_s,
                               client_get_string(d, "twin", "-"), link);
                }
        }
        jsonrpc_response_done(&resp);
        return EXIT_OK;
}

static int cmd_peers(const struct client_options *o, int argc, char **argv)
{
        struct jsonrpc_response resp;
        json_object *list = NULL;
        int r;

        if (no_args("peers", argc) < 0)
                return EXIT_DAEMON_ERROR;
        r = call(o, "peers", NULL, &resp, NULL);
        if (r < 0)
                return -r;
        if (o->json) {
                client_print_json(resp.result);
                jsonrpc_response_done(&resp);
                return EXIT_OK;
        }
        printf("peering %s, key %s, port %d, mDNS %s\n\n", get_bool(resp.result, "peering") ? "on" : "OFF",
               client_get_string(resp.result, "key_id", "none"), get_int(resp.result, "port"),
               client_get_string(resp.result, "mdns", "?"));
        json_object_object_get_ex(resp.result, "peers", &list);
        if (!list || json_object_array_length(list) == 0) {
                printf("no peers: none found over mDNS and none in [peers] static\n");
        } else {
                printf("%-16s %-10s %-20s %-14s %-16s %-16s %-11s %s\n", "PEER", "STATE", "SINCE", "VIA",
                       "LOCAL", "REMOTE", "MTU HERE/PEER", "NOTE");
        }
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i), *via = NULL, *mtu = NULL, *addrs = NULL;
                char mtu_s[32] = "-";
                const char *name = client_get_string(p, "name", NULL);

                json_object_object_get_ex(p, "via", &via);
                json_object_object_get_ex(p, "mtu", &mtu);
                json_object_object_get_ex(p, "addresses", &addrs);
                if (!name)
                        name = client_get_string(p, "static", NULL);
                if (!name && addrs && json_object_array_length(addrs) > 0)
                        name = json_object_get_string(json_object_array_get_idx(addrs, 0));
                if (mtu && get_int(mtu, "local") && get_int(mtu, "peer"))
                        snprintf(mtu_s, sizeof(mtu_s), "%d/%d%s", get_int(mtu, "local"),
                                 get_int(mtu, "peer"), get_bool(mtu, "mismatch") ? " MISMATCH" : "");
                printf("%-16s %-10s %-20s %-14s %-16s %-16s %-11s %s\n", name ? name : "?",
                       client_get_string(p, "state", "?"), client_get_string(p, "since", "?"),
                       via ? client_get_string(via, "iface", "-") : "-",
                       via ? client_get_string(via, "local", "-") : "-",
                       via ? client_get_string(via, "remote", "-") : "-", mtu_s,
                       client_get_string(p, "error", ""));
        }
        jsonrpc_response_done(&resp);
        return EXIT_OK;
}

static int cmd_keygen(const struct client_options *o, int argc, char **argv)
{
        const char *path = CLUSTER_KEY_PATH;
        struct cluster_key key;
        bool force = false;
        int r;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--force") == 0)
                        force = true;
                else if (argv[i][0] != '-')
                        path = argv[i];
                else {
                        fprintf(stderr, "usage: sparkc keygen [--force] [FILE]\n");
                        return EXIT_DAEMON_ERROR;
                }
        }
        r = cluster_key_generate(path, force, &key);
        if (r == -EEXIST) {
                fprintf(stderr,
                        "sparkc: keygen: %s exists; every node needs the same key, so copy that one "
                        "(--force replaces it and cuts this node off until the others have the new one)\n",
                        path);
                return EXIT_DAEMON_ERROR;
        }
        if (r < 0) {
                fprintf(stderr, "sparkc: keygen: cannot write %s: %s\n", path, strerror(-r));
                return EXIT_DAEMON_ERROR;
        }
        printf("wrote a new cluster key to %s (id %s); copy it to every node (mode 600) and reload sparkd\n",
               path, key.id);
        return EXIT_OK;
}

int client_call(const struct client_options *o, const char *method, json_object *params,
                struct jsonrpc_response *resp)
{
        return call(o, method, params, resp, NULL);
}

static int cmd_metrics(const struct client_options *o, int argc, char **argv)
{
        struct jsonrpc_response resp;
        int r;

        if (no_args("metrics", argc) < 0)
                return EXIT_DAEMON_ERROR;
        r = call(o, "metrics", NULL, &resp, NULL);
        if (r < 0)
                return -r;
        if (o->json)
                client_print_json(resp.result);
        else
                fputs(client_get_string(resp.result, "text", ""), stdout);
        jsonrpc_response_done(&resp);
        return EXIT_OK;
}

static const struct command commands[] = {
        { "status", "the node, version, uptime, config, mode; GID changes since `sparkc env`", cmd_status },
        { "version", "the client's and the daemon's versions", cmd_version },
        { "reload", "re-read the config (root or the admin group)", cmd_reload },
        { "links", "fabric interfaces: twin, state, MTU, speed, flaps, corrections, drift; sysctls",
          cmd_links },
        { "fabric", "RDMA devices, ports, netdevs (ibdev2netdev), RoCE v2 GID index, twins", cmd_fabric },
        { "env [--mode M] [--format F]",
          "NCCL/UCX/MPI/Gloo variables for this node (eval \"$(sparkc env)\")", cmd_env },
        { "doctor", "check the node's fabric set-up; exit 0 ok, 1 warn, 2 fail, 3 unknown", cmd_doctor },
        { "peers", "the other nodes: state, the local port that reaches each, MTU at both ends", cmd_peers },
        { "probe --peer NAME [--kind K|all] [--duration S] [--size B] [--streams N] [--count N] "
          "[--mode M] [--env NAME=VALUE] [--param NAME=VALUE]",
          "measure the link to a peer with one probe kind or all; exit 0 ok, 1 degraded, 2 failed",
          cmd_probe },
        { "probe-kinds", "the probe kinds this sparkd has, and the parameters each takes", cmd_probe_kinds },
        { "history [--peer NAME] [--kind K] [--limit N]", "earlier probe results, newest first",
          cmd_history },
        { "metrics", "Prometheus text exposition (links, peers, latest probe results)", cmd_metrics },
        { "keygen [--force] [FILE]", "write a new cluster key (default " CLUSTER_KEY_PATH ")", cmd_keygen },
        { "watch [EVENT]...", "print events as they happen (all, or the types named)", cmd_watch },
        {},
};

static void on_interrupt(int sig)
{
        /* Leaves poll() with EINTR so watch ends with a clean exit code. */
}

int main(int argc, char **argv)
{
        static const struct option options[] = {
                { "socket", required_argument, NULL, 's' },  { "json", no_argument, NULL, 'j' },
                { "timeout", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },       {},
        };
        struct client_options o = { .timeout_ms = 10000 };
        struct sigaction sa = { .sa_handler = on_interrupt };
        uint64_t sec;
        int c;

        o.socket_path = getenv(SPARKD_SOCKET_ENV);
        if (str_is_empty(o.socket_path))
                o.socket_path = SPARKD_SOCKET_PATH;
        /* "+": options end at the command, so commands can have options of their own. */
        while ((c = getopt_long(argc, argv, "+s:jt:h", options, NULL)) >= 0) {
                switch (c) {
                case 's':
                        o.socket_path = optarg;
                        break;
                case 'j':
                        o.json = true;
                        break;
                case 't':
                        if (parse_uint64(optarg, 10, 1, 86400, &sec) < 0) {
                                fprintf(stderr, "sparkc: --timeout needs whole seconds from 1 to 86400\n");
                                return EXIT_DAEMON_ERROR;
                        }
                        o.timeout_ms = (int)sec * 1000;
                        break;
                case 'h':
                        print_help();
                        return EXIT_OK;
                case 'V':
                        printf("sparkc %s (api %d)\n", SPARKD_VERSION, SPARKD_API_VERSION);
                        return EXIT_OK;
                default:
                        fprintf(stderr, "Try 'sparkc --help'.\n");
                        return EXIT_DAEMON_ERROR;
                }
        }
        if (optind >= argc) {
                print_help();
                return EXIT_DAEMON_ERROR;
        }
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        for (const struct command *cmd = commands; cmd->name; cmd++) {
                size_t n = strcspn(cmd->name, " ");

                if (strlen(argv[optind]) != n || strncmp(cmd->name, argv[optind], n) != 0)
                        continue;
                if (wants_help(argc - optind, argv + optind)) {
                        printf("Usage: sparkc [OPTION]... %s\n%s\n", cmd->name, cmd->summary);
                        return EXIT_OK;
                }
                return cmd->run(&o, argc - optind, argv + optind);
        }
        fprintf(stderr, "sparkc: unknown command \"%s\"\nTry 'sparkc --help'.\n", argv[optind]);
        return EXIT_DAEMON_ERROR;
}
