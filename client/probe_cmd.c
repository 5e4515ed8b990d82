/* sparkc probe and sparkc history: asking for probes, following them, showing results. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "jsonrpc.h"
#include "rpc.h"
#include "strutil.h"

/* Exit codes of `sparkc probe`: the worst result decides. */
enum {
        PROBE_EXIT_OK = 0,
        PROBE_EXIT_DEGRADED = 1,
        PROBE_EXIT_FAILED = 2,
};

static void on_progress(const char *method, json_object *params, void *userdata)
{
        const char *phase = client_get_string(params, "phase", "?");
        json_object *v;

        /* A live line on a terminal only: scripts read the result, not the ticker. */
        if (!isatty(STDERR_FILENO) || strcmp(method, "probe-progress") != 0)
                return;
        fprintf(stderr, "\r\033[K%s %s: %s", client_get_string(params, "kind", "probe"), phase,
                client_get_string(params, "message", ""));
        if (json_object_object_get_ex(params, "gbps", &v))
                fprintf(stderr, "%.2f Gb/s after %.0f s", json_object_get_double(v),
                        json_object_object_get_ex(params, "elapsed_s", &v) ? json_object_get_double(v)
                                                                           : 0.0);
        fflush(stderr);
        (void)userdata;
}

static void print_result_row(json_object *r)
{
        json_object *m = NULL, *e = NULL, *v;
        char value[64] = "-", expected[48] = "-";
        const char *kind = client_get_string(r, "kind", "?");

        json_object_object_get_ex(r, "measured", &m);
        json_object_object_get_ex(r, "expected", &e);
        if (m && strcmp(kind, "tcp") == 0)
                snprintf(value, sizeof(value), "%.2f Gb/s",
                         json_object_object_get_ex(m, "gbps", &v) ? json_object_get_double(v) : 0);
        else if (m && strcmp(kind, "rtt") == 0)
                snprintf(value, sizeof(value), "%.1f/%.1f/%.1f us",
                         json_object_object_get_ex(m, "min_us", &v) ? json_object_get_double(v) : 0,
                         json_object_object_get_ex(m, "median_us", &v) ? json_object_get_double(v) : 0,
                         json_object_object_get_ex(m, "p99_us", &v) ? json_object_get_double(v) : 0);
        if (e && json_object_object_get_ex(e, "value", &v) && v)
                snprintf(expected, sizeof(expected), "%.2f (%s)", json_object_get_double(v),
                         client_get_string(e, "source", "?"));
        else if (e)
                snprintf(expected, sizeof(expected), "(%s)", client_get_string(e, "source", "?"));
        printf("%-20s %-12s %-5s %-9s %-26s %-20s %s\n", client_get_string(r, "started_at", "?"),
               client_get_string(r, "peer", "?"), kind, client_get_string(r, "status", "?"), value, expected,
               client_get_string(r, "error", ""));
}

static void print_header(void)
{
        printf("%-20s %-12s %-5s %-9s %-26s %-20s %s\n", "STARTED", "PEER", "KIND", "STATUS",
               "MEASURED (rtt min/med/p99)", "EXPECTED", "ERROR");
}

static int status_exit(json_object *r)
{
        const char *s = client_get_string(r, "status", "failed");

        return strcmp(s, "ok") == 0         ? PROBE_EXIT_OK
               : strcmp(s, "degraded") == 0 ? PROBE_EXIT_DEGRADED
                                            : PROBE_EXIT_FAILED;
}

static int run_one(const struct client_options *o, const char *peer, const char *kind, long duration,
                   long size, long streams, json_object *results)
{
        struct client_options slow = *o;
        struct rpc_client *c = NULL;
        struct jsonrpc_response resp;
        json_object *params = json_object_new_object();
        int r;

        json_object_object_add(params, "peer", json_object_new_string(peer));
        json_object_object_add(params, "kind", json_object_new_string(kind));
        if (duration > 0)
                json_object_object_add(params, "duration_s", json_object_new_int((int)duration));
        if (size > 0)
                json_object_object_add(params, "size", json_object_new_int((int)size));
        if (streams > 0)
                json_object_object_add(params, "streams", json_object_new_int((int)streams));
        /* The answer comes when the probe is over: wait for its whole deadline. */
        slow.timeout_ms = o->timeout_ms + (int)((duration > 0 ? duration : 5) + 40) * 1000;
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

int cmd_probe(const struct client_options *o, int argc, char **argv)
{
        static const struct option options[] = {
                { "peer", required_argument, NULL, 'p' },     { "kind", required_argument, NULL, 'k' },
                { "duration", required_argument, NULL, 'd' }, { "size", required_argument, NULL, 's' },
                { "streams", required_argument, NULL, 'n' },  {},
        };
        static const char *const all[] = { "rtt", "tcp", "rdma", "nccl", NULL };
        const char *peer = NULL, *kind = "rtt";
        long duration = 0, size = 0, streams = 0;
        json_object *results;
        int c, worst = PROBE_EXIT_OK;
        uint64_t v;

        optind = 1;
        while ((c = getopt_long(argc, argv, "p:k:d:s:n:", options, NULL)) >= 0) {
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
                        if (parse_uint64(optarg, 10, 1, c == 's' ? 65536 : c == 'n' ? 64 : 600, &v) < 0) {
                                fprintf(stderr, "sparkc: probe: --%s: a number in range\n",
                                        c == 'd'   ? "duration"
                                        : c == 's' ? "size"
                                                   : "streams");
                                return PROBE_EXIT_FAILED;
                        }
                        *(c == 'd' ? &duration : c == 's' ? &size : &streams) = (long)v;
                        break;
                default:
                        fprintf(stderr, "usage: sparkc probe --peer NAME [--kind rtt|tcp|rdma|nccl|all] "
                                        "[--duration S] "
                                        "[--size BYTES] [--streams N]\n");
                        return PROBE_EXIT_FAILED;
                }
        }
        if (!peer) {
                fprintf(stderr, "sparkc: probe: --peer NAME is needed (see sparkc peers)\n");
                return PROBE_EXIT_FAILED;
        }
        results = json_object_new_array();
        for (const char *const *k = all; *k; k++) {
                if (strcmp(kind, "all") != 0 && strcmp(kind, *k) != 0)
                        continue;
                if (run_one(o, peer, *k, duration, size, streams, results) < 0) {
                        json_object_put(results);
                        return PROBE_EXIT_FAILED;
                }
        }
        if (json_object_array_length(results) == 0) {
                fprintf(stderr, "sparkc: probe: --kind is rtt, tcp, rdma, nccl or all\n");
                json_object_put(results);
                return PROBE_EXIT_FAILED;
        }
        if (o->json) {
                client_print_json(json_object_array_length(results) == 1
                                          ? json_object_array_get_idx(results, 0)
                                          : results);
        } else {
                print_header();
                for (size_t i = 0; i < json_object_array_length(results); i++)
                        print_result_row(json_object_array_get_idx(results, i));
        }
        for (size_t i = 0; i < json_object_array_length(results); i++) {
                int e = status_exit(json_object_array_get_idx(results, i));

                /* With --kind all, a kind this build lacks does not make the others fail. */
                if (strcmp(kind, "all") == 0 &&
                    strstr(client_get_string(json_object_array_get_idx(results, i), "error", ""),
                           "not part of this build"))
                        continue;
                if (e > worst)
                        worst = e;
        }
        json_object_put(results);
        return worst;
}

int cmd_history(const struct client_options *o, int argc, char **argv)
{
        static const struct option options[] = {
                { "peer", required_argument, NULL, 'p' },
                { "kind", required_argument, NULL, 'k' },
                { "limit", required_argument, NULL, 'l' },
                {},
        };
        json_object *params = json_object_new_object(), *results = NULL;
        struct jsonrpc_response resp;
        uint64_t limit;
        int c, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, "p:k:l:", options, NULL)) >= 0) {
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
                print_header();
                for (size_t i = 0; i < json_object_array_length(results); i++)
                        print_result_row(json_object_array_get_idx(results, i));
        } else {
                printf("no probe results yet\n");
        }
        jsonrpc_response_done(&resp);
        return 0;
}
