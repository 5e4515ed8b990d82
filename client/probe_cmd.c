/* sparkc probe and sparkc history: asking for probes, following them, showing results. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "common/jsonrpc.h"
#include "common/strutil.h"
#include "common/text_escape.h"
#include "probe_table.h"
#include "rpc.h"

static void on_progress(const char *method, json_object *params, void *userdata)
{
        const char *phase = client_get_string(params, "phase", "?");
        json_object *gbps, *elapsed;

        /* A live line on a terminal only: scripts read the result, not the ticker. */
        if (!isatty(STDERR_FILENO) || strcmp(method, "probe-progress") != 0 || escape_term_json(params) < 0)
                return;
        fprintf(stderr, "\r\033[K%s %s: %s", client_get_string(params, "kind", "probe"), phase,
                client_get_string(params, "message", ""));
        /* Two lookups, two variables: the arguments of one call are evaluated in no fixed order. */
        if (json_object_object_get_ex(params, "gbps", &gbps) &&
            json_object_object_get_ex(params, "elapsed_s", &elapsed))
                fprintf(stderr, "%.2f Gb/s after %.0f s", json_object_get_double(gbps),
                        json_object_get_double(elapsed));
        fflush(stderr);
        (void)userdata;
}

/* The kinds the daemon has (its probe-kinds answer), for their parameters and metrics. */
static json_object *fetch_kinds(const struct client_options *o)
{
        struct jsonrpc_response resp;
        json_object *kinds = NULL;

        if (client_call(o, "probe-kinds", NULL, &resp) < 0)
                return NULL;
        if (json_object_object_get_ex(resp.result, "kinds", &kinds))
                json_object_get(kinds);
        jsonrpc_response_done(&resp);
        return kinds;
}

/* The kind's description of one parameter, NULL when it takes none of that name. */
static json_object *kind_param(json_object *kind, const char *param)
{
        json_object *params;

        json_object_object_get_ex(kind, "params", &params);
        for (size_t i = 0; params && i < json_object_array_length(params); i++)
                if (strcmp(client_get_string(json_object_array_get_idx(params, i), "name", ""), param) == 0)
                        return json_object_array_get_idx(params, i);
        return NULL;
}

static double number(json_object *o, const char *key)
{
        json_object *v;

        return o && json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : 0;
}

static int status_exit(json_object *r)
{
        const char *s = client_get_string(r, "status", "failed");

        return strcmp(s, "ok") == 0         ? PROBE_EXIT_OK
               : strcmp(s, "degraded") == 0 ? PROBE_EXIT_DEGRADED
                                            : PROBE_EXIT_FAILED;
}

static int run_one(const struct client_options *o, const char *peer, const char *kind, json_object *given,
                   json_object *results)
{
        struct client_options slow = *o;
        struct rpc_client *c = NULL;
        struct jsonrpc_response resp;
        json_object *params = json_object_new_object(), *v;
        int r;

        json_object_object_add(params, "peer", json_object_new_string(peer));
        json_object_object_add(params, "kind", json_object_new_string(kind));
        json_object_object_foreach(given, key, value)
                json_object_object_add(params, key, json_object_get(value));
        /* The answer comes when the probe is over; the daemon's own deadlines end it, so this
         * only guards against a daemon that never answers. */
        slow.timeout_ms =
                o->timeout_ms +
                (int)((json_object_object_get_ex(given, "duration_s", &v) ? json_object_get_int(v) : 5) +
                      1800) *
                        1000;
        r = rpc_connect(slow.socket_path, slow.timeout_ms, &c);
        if (r < 0) {
                json_object_put(params);
                fprintf(stderr, "sparkc: cannot reach sparkd at %s: %s\n", o->socket_path, strerror(-r));
                return -1;
        }
        r = rpc_call_notify(c, "probe", params, &resp, on_progress, NULL);
        rpc_close(c);
        if (isatty(STDERR_FILENO))
                fprintf(stderr, "\r\033[K");
        if (r == 0 && !o->json && resp.result)
                (void)escape_term_json(resp.result);
        if (r < 0) {
                fprintf(stderr, "sparkc: probe: no answer from sparkd: %s\n", strerror(-r));
                return -1;
        }
        if (resp.error_message) {
                json_object *fake = json_object_new_object();

                json_object_object_add(fake, "peer", json_object_new_string(peer));
                json_object_object_add(fake, "kind", json_object_new_string(kind));
                json_object_object_add(fake, "status", json_object_new_string("failed"));
                json_object_object_add(fake, "error", json_object_new_string(resp.error_message));
                json_object_array_add(results, fake);
        } else {
                json_object_array_add(results, json_object_get(resp.result));
        }
        jsonrpc_response_done(&resp);
        return 0;
}

/* The parameters for one kind: those given that it takes. With a single kind, a parameter it
 * does not take is an error; with --kind all each kind takes what applies to it. */
static int kind_params(json_object *kind, json_object *given, bool is_single, json_object **out)
{
        json_object *params = json_object_new_object();

        json_object_object_foreach(given, key, value) {
                json_object *spec = kind_param(kind, key);
                bool is_list = spec && strcmp(client_get_string(spec, "type", ""), "list") == 0;

                if (spec && is_list && !json_object_is_type(value, json_type_array)) {
                        /* One item given: a list of one. */
                        json_object *list = json_object_new_array();

                        json_object_array_add(list, json_object_get(value));
                        json_object_object_add(params, key, list);
                } else if (spec && !is_list && json_object_is_type(value, json_type_array)) {
                        fprintf(stderr, "sparkc: probe: %s is given more than once\n", key);
                        json_object_put(params);
                        return -EINVAL;
                } else if (spec && strcmp(client_get_string(spec, "type", ""), "string") == 0 &&
                           json_object_is_type(value, json_type_int)) {
                        /* A string parameter given digits (a GID index): the string of them. */
                        json_object_object_add(params, key,
                                               json_object_new_string(json_object_get_string(value)));
                } else if (spec) {
                        json_object_object_add(params, key, json_object_get(value));
                } else if (is_single) {
                        fprintf(stderr,
                                "sparkc: probe: the %s probe takes no %s (sparkc probe-kinds lists its "
                                "parameters)\n",
                                client_get_string(kind, "name", "?"), key);
                        json_object_put(params);
                        return -EINVAL;
                }
        }
        *out = params;
        return 0;
}

/* NAME=VALUE: a number (with K, M, G suffixes) or a string; a name given again makes a list. */
static int add_param(json_object *given, const char *name, const char *value)
{
        json_object *v, *old;
        uint64_t n;

        v = parse_size(value, 0, INT64_MAX, &n) == 0 ? json_object_new_int64((int64_t)n)
                                                     : json_object_new_string(value);
        if (!json_object_object_get_ex(given, name, &old)) {
                json_object_object_add(given, name, v);
                return 0;
        }
        if (!json_object_is_type(old, json_type_array)) {
                json_object *list = json_object_new_array();

                json_object_array_add(list, json_object_get(old));
                json_object_object_add(given, name, list);
                old = list;
        }
        json_object_array_add(old, v);
        return 0;
}

static int parse_param(const char *arg, json_object *given)
{
        const char *eq = strchr(arg, '=');
        char name[64];

        if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(name) || !eq[1]) {
                fprintf(stderr, "sparkc: probe: --param wants NAME=VALUE, not '%s'\n", arg);
                return -EINVAL;
        }
        snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
        return add_param(given, name, eq + 1);
}

/* --env NAME=VALUE: an item of the env list, kept whole (values may hold commas or digits). */
static void add_env(json_object *given, const char *item)
{
        json_object *list;

        if (!json_object_object_get_ex(given, "env", &list)) {
                list = json_object_new_array();
                json_object_object_add(given, "env", list);
        }
        json_object_array_add(list, json_object_new_string(item));
}

static void probe_usage(void)
{
        fprintf(stderr,
                "usage: sparkc probe --peer NAME [--kind KIND|all] [--duration S] [--size BYTES] "
                "[--streams N] [--count N] [--mode auto|safe|dmabuf] [--env NAME=VALUE]... "
                "[--param NAME=VALUE]...\n"
                "       sparkc probe --kind nccl --all|--nodes A,B,... [--mode M] [--env NAME=VALUE]... "
                "[--param NAME=VALUE]...\n"
                "       (one rank on every node of the job plan, or those named)\n"
                "       (sparkc probe-kinds lists the kinds and the parameters each takes)\n");
}

static const struct option probe_long_options[] = {
        { "peer", required_argument, NULL, 'p' },     { "kind", required_argument, NULL, 'k' },
        { "duration", required_argument, NULL, 'd' }, { "size", required_argument, NULL, 's' },
        { "streams", required_argument, NULL, 'n' },  { "count", required_argument, NULL, 'c' },
        { "param", required_argument, NULL, 'P' },    { "env", required_argument, NULL, 'E' },
        { "mode", required_argument, NULL, 'M' },     { "all", no_argument, NULL, 'A' },
        { "nodes", required_argument, NULL, 'N' },    {},
};

const struct command_options probe_options = {
        .short_options = "p:k:d:s:n:c:P:E:M:AN:",
        .long_options = probe_long_options,
};

int cmd_probe(const struct client_options *o, int argc, char **argv)
{
        const char *peer = NULL, *kind = "rtt", *nodes = NULL;
        json_object *given = json_object_new_object(), *kinds = NULL, *results = NULL;
        int c, worst = PROBE_EXIT_OK;
        bool is_all, is_collective = false;

        optind = 1;
        while ((c = getopt_long(argc, argv, probe_options.short_options, probe_long_options, NULL)) >= 0) {
                switch (c) {
                case 'p':
                        peer = optarg;
                        break;
                case 'k':
                        kind = optarg;
                        break;
                case 'd':
                case 's':
                case 'n':
                case 'c': {
                        /* Ranges are the kind's, checked by the daemon, which says them. */
                        const char *name = c == 'd'   ? "duration_s"
                                           : c == 's' ? "size"
                                           : c == 'n' ? "streams"
                                                      : "count";
                        uint64_t v;

                        if (parse_size(optarg, 0, INT64_MAX, &v) < 0) {
                                fprintf(stderr, "sparkc: probe: --%s wants a number, not '%s'\n",
                                        probe_long_options[c == 'd'   ? 2
                                                           : c == 's' ? 3
                                                           : c == 'n' ? 4
                                                                      : 5]
                                                .name,
                                        optarg);
                                goto usage;
                        }
                        json_object_object_add(given, name, json_object_new_int64((int64_t)v));
                        break;
                }
                case 'P':
                        if (parse_param(optarg, given) < 0)
                                goto usage;
                        break;
                case 'E':
                        add_env(given, optarg);
                        break;
                case 'M':
                        json_object_object_add(given, "mode", json_object_new_string(optarg));
                        break;
                case 'A':
                        is_collective = true;
                        break;
                case 'N':
                        is_collective = true;
                        nodes = optarg;
                        break;
                default:
                        goto usage;
                }
        }
        if (is_collective) {
                if (peer || strcmp(kind, "nccl") != 0) {
                        fprintf(stderr, "sparkc: probe: --all and --nodes run the nccl kind across nodes: "
                                        "give --kind nccl and no --peer\n");
                        goto usage;
                }
                kinds = fetch_kinds(o);
                if (!kinds || !probe_kind_find(kinds, "nccl")) {
                        if (kinds)
                                fprintf(stderr, "sparkc: probe: sparkd has no nccl probe\n");
                        goto fail;
                }
                if (kind_params(probe_kind_find(kinds, "nccl"), given, true, &results) < 0)
                        goto fail;
                c = probe_collective(o, nodes, results);
                json_object_put(results);
                json_object_put(kinds);
                json_object_put(given);
                return c;
        }
        if (!peer) {
                fprintf(stderr, "sparkc: probe: --peer NAME is needed (see sparkc peers)\n");
                goto usage;
        }
        kinds = fetch_kinds(o);
        if (!kinds) {
                json_object_put(given);
                return PROBE_EXIT_FAILED;
        }
        is_all = strcmp(kind, "all") == 0;
        if (!is_all && !probe_kind_find(kinds, kind)) {
                fprintf(stderr, "sparkc: probe: sparkd has no %s probe (sparkc probe-kinds lists them)\n",
                        kind);
                goto fail;
        }
        results = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(kinds); i++) {
                json_object *k = json_object_array_get_idx(kinds, i), *params;
                const char *name = client_get_string(k, "name", "?");

                if (!is_all && strcmp(kind, name) != 0)
                        continue;
                if (kind_params(k, given, !is_all, &params) < 0)
                        goto fail;
                c = run_one(o, peer, name, params, results);
                json_object_put(params);
                if (c < 0)
                        goto fail;
        }
        if (o->json) {
                client_print_json(json_object_array_length(results) == 1
                                          ? json_object_array_get_idx(results, 0)
                                          : results);
        } else {
                probe_table_header(stdout);
                for (size_t i = 0; i < json_object_array_length(results); i++)
                        probe_table_result(stdout, json_object_array_get_idx(results, i), kinds, true);
        }
        for (size_t i = 0; i < json_object_array_length(results); i++) {
                json_object *r = json_object_array_get_idx(results, i);

                /* With --kind all, a kind this node or the peer cannot run says so in the table
                 * without failing the others. */
                if (is_all && strcmp(client_get_string(r, "status", ""), "unavailable") == 0)
                        continue;
                if (status_exit(r) > worst)
                        worst = status_exit(r);
        }
        json_object_put(results);
        json_object_put(kinds);
        json_object_put(given);
        return worst;
usage:
        probe_usage();
fail:
        json_object_put(results);
        json_object_put(kinds);
        json_object_put(given);
        return PROBE_EXIT_FAILED;
}

int cmd_probe_kinds(const struct client_options *o, int argc, char **argv)
{
        json_object *kinds;

        if (argc > 1) {
                fprintf(stderr, "usage: sparkc probe-kinds\n");
                return 1;
        }
        if (o->json) {
                struct jsonrpc_response resp;
                int r = client_call(o, "probe-kinds", NULL, &resp);

                if (r < 0)
                        return -r;
                client_print_json(resp.result);
                jsonrpc_response_done(&resp);
                return 0;
        }
        kinds = fetch_kinds(o);
        if (!kinds)
                return 1;
        for (size_t i = 0; i < json_object_array_length(kinds); i++) {
                json_object *k = json_object_array_get_idx(kinds, i), *params, *v;

                printf("%-6s %s%s%s\n", client_get_string(k, "name", "?"),
                       client_get_string(k, "summary", ""),
                       json_object_object_get_ex(k, "bandwidth", &v) && json_object_get_boolean(v)
                               ? " (bandwidth: one at a time)"
                               : "",
                       json_object_object_get_ex(k, "installed", &v) && json_object_get_boolean(v)
                               ? ""
                               : "; not available here: its helper is not installed");
                json_object_object_get_ex(k, "params", &params);
                for (size_t j = 0; params && j < json_object_array_length(params); j++) {
                        json_object *p = json_object_array_get_idx(params, j);

                        const char *type = client_get_string(p, "type", "integer");
                        json_object *choices = NULL, *def = NULL;

                        if (strcmp(type, "integer") == 0) {
                                printf("       %-15s %.0f to %.0f, default %.0f\n",
                                       client_get_string(p, "name", "?"), number(p, "min"), number(p, "max"),
                                       number(p, "default"));
                                continue;
                        }
                        json_object_object_get_ex(p, "choices", &choices);
                        json_object_object_get_ex(p, "default", &def);
                        printf("       %-15s %s%s%s%s, default %s\n", client_get_string(p, "name", "?"),
                               strcmp(type, "list") == 0 ? "list of " : "",
                               client_get_string(p, "what", "?"), choices ? ": " : "",
                               choices ? json_object_to_json_string_ext(choices, JSON_C_TO_STRING_PLAIN)
                                       : "",
                               def ? json_object_to_json_string_ext(def, JSON_C_TO_STRING_PLAIN) : "none");
                }
        }
        json_object_put(kinds);
        return 0;
}

const struct command_options history_options = {
        .short_options = "p:k:l:",
        .long_options =
                (const struct option[]){
                        { "peer", required_argument, NULL, 'p' },
                        { "kind", required_argument, NULL, 'k' },
                        { "limit", required_argument, NULL, 'l' },
                        {},
                },
};

int cmd_history(const struct client_options *o, int argc, char **argv)
{
        json_object *params = json_object_new_object(), *results = NULL;
        struct jsonrpc_response resp;
        uint64_t limit;
        int c, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, history_options.short_options, history_options.long_options,
                                NULL)) >= 0) {
                switch (c) {
                case 'p':
                        json_object_object_add(params, "peer", json_object_new_string(optarg));
                        break;
                case 'k':
                        json_object_object_add(params, "kind", json_object_new_string(optarg));
                        break;
                case 'l':
                        if (parse_uint64(optarg, 10, 1, 100000, &limit) < 0) {
                                json_object_put(params);
                                fprintf(stderr, "sparkc: history: --limit is a number\n");
                                return 1;
                        }
                        json_object_object_add(params, "limit", json_object_new_int((int)limit));
                        break;
                default:
                        json_object_put(params);
                        fprintf(stderr, "usage: sparkc history [--peer NAME] [--kind K] [--limit N]\n");
                        return 1;
                }
        }
        r = client_call(o, "history", params, &resp);
        if (r < 0)
                return -r;
        if (o->json) {
                client_print_json(resp.result);
        } else if (json_object_object_get_ex(resp.result, "results", &results) &&
                   json_object_array_length(results)) {
                json_object *kinds = fetch_kinds(o);

                probe_table_header(stdout);
                for (size_t i = 0; i < json_object_array_length(results); i++)
                        probe_table_result(stdout, json_object_array_get_idx(results, i), kinds, false);
                json_object_put(kinds);
        } else {
                printf("no probe results yet\n");
        }
        jsonrpc_response_done(&resp);
        return 0;
}
