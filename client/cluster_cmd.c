/* sparkc cluster: every node on one screen, from the summaries the nodes exchange. */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "cluster_matrix.h"
#include "daemon_names.h"
#include "report.h"

/* How often --watch asks again. */
#define WATCH_INTERVAL_SEC 2

const struct command_options cluster_options = {
        .short_options = "m:wr",
        .long_options =
                (const struct option[]){
                        { "matrix", required_argument, NULL, 'm' },
                        { "watch", no_argument, NULL, 'w' },
                        { "results", no_argument, NULL, 'r' },
                        {},
                },
};

static json_object *member(json_object *o, const char *key)
{
        json_object *v = NULL;

        return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void format_age(char *buf, size_t size, double age_s)
{
        long s = (long)age_s;

        if (age_s < 60)
                snprintf(buf, size, "%.1fs", age_s);
        else if (s < 3600)
                snprintf(buf, size, "%ldm%02lds", s / 60, s % 60);
        else if (s < 86400)
                snprintf(buf, size, "%ldh%02ldm", s / 3600, s % 3600 / 60);
        else
                snprintf(buf, size, "%ldd%02ldh", s / 86400, s % 86400 / 3600);
}

/* The node before n whose doctor has a check with the same id, status and summary as c (a
 * cluster-wide finding, such as the topology's, reads the same on every node), or NULL. */
static const char *same_check_before(json_object *nodes, size_t n, json_object *c)
{
        for (size_t i = 0; i < n; i++) {
                json_object *checks = member(
                        member(member(json_object_array_get_idx(nodes, i), "sections"), "doctor"), "checks");

                for (size_t k = 0; checks && k < json_object_array_length(checks); k++) {
                        json_object *o = json_object_array_get_idx(checks, k);

                        if (strcmp(client_get_string(o, "id", ""), client_get_string(c, "id", "")) == 0 &&
                            strcmp(client_get_string(o, "status", ""), client_get_string(c, "status", "")) ==
                                    0 &&
                            strcmp(client_get_string(o, "summary", ""),
                                   client_get_string(c, "summary", "")) == 0)
                                return client_get_string(json_object_array_get_idx(nodes, i), "name", "?");
                }
        }
        return NULL;
}

static void show_nodes(json_object *result)
{
        json_object *nodes = member(result, "nodes");
        const char *self = client_get_string(result, "self", "");

        printf("%-18s %-8s %-10s %-9s %s\n", "NODE", "VERDICT", "VERSION", "AGE", "CHECKS NOT OK");
        for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
                json_object *n = json_object_array_get_idx(nodes, i), *sections = member(n, "sections");
                json_object *doctor = member(sections, "doctor"), *node = member(sections, "node");
                json_object *checks = member(doctor, "checks");
                bool is_self = strcmp(client_get_string(n, "node_id", ""), self) == 0;
                size_t n_checks = checks ? json_object_array_length(checks) : 0;
                char name[40], age[48];

                snprintf(name, sizeof(name), "%s%s", client_get_string(n, "name", "?"),
                         is_self ? " (this)" : "");
                format_age(age, sizeof(age), client_get_double(n, "age_s"));
                if (client_get_bool(n, "stale"))
                        strncat(age, " STALE", sizeof(age) - strlen(age) - 1);
                if (client_get_bool(n, "slow"))
                        strncat(age, " SLOW", sizeof(age) - strlen(age) - 1);
                printf("%-18s %-8s %-10s %-9s %s\n", name, client_get_string(doctor, "verdict", "-"),
                       client_get_string(node, "version", "-"), age, n_checks ? "" : "-");
                for (size_t k = 0; k < n_checks; k++) {
                        json_object *c = json_object_array_get_idx(checks, k);
                        const char *before = same_check_before(nodes, i, c);

                        /* Said once: a finding every node reports is not repeated under each. */
                        if (before)
                                printf("    %-8s %s: as on %s\n", client_get_string(c, "status", "?"),
                                       client_get_string(c, "id", "?"), before);
                        else
                                printf("    %-8s %s: %s\n", client_get_string(c, "status", "?"),
                                       client_get_string(c, "id", "?"), client_get_string(c, "summary", ""));
                }
        }
}

static void format_cell(char *buf, size_t size, json_object *cell, const char *metric)
{
        json_object *value = member(cell, "value");
        char number[32];

        if (!value) {
                snprintf(buf, size, "-");
                return;
        }
        cluster_metric_format(number, sizeof(number), json_object_get_double(value), metric);
        snprintf(buf, size, "%s %s%s", number, client_get_string(cell, "verdict", "?"),
                 client_get_bool(cell, "stale") ? " (stale)" : "");
}

static void show_links(json_object *result)
{
        json_object *links = member(result, "links");
        size_t n = links ? json_object_array_length(links) : 0;

        printf("\n%s\n", n ? "LINKS (newest measurement each way)" : "LINKS: no probe results yet");
        for (size_t i = 0; i < n; i++) {
                json_object *l = json_object_array_get_idx(links, i), *kinds = member(l, "kinds");
                const char *a = client_get_string(member(l, "a"), "name", "?");
                const char *b = client_get_string(member(l, "b"), "name", "?");

                printf("%s <-> %s\n", a, b);
                for (size_t k = 0; kinds && k < json_object_array_length(kinds); k++) {
                        json_object *e = json_object_array_get_idx(kinds, k);
                        const char *metric = client_get_string(e, "metric", "");
                        char ab[64], ba[64];

                        format_cell(ab, sizeof(ab), member(e, "a_to_b"), metric);
                        format_cell(ba, sizeof(ba), member(e, "b_to_a"), metric);
                        printf("    %-8s %s -> %s %-26s %s -> %s %s\n", client_get_string(e, "kind", "?"), a,
                               b, ab, b, a, ba);
                }
        }
}

static void show_alerts(json_object *result)
{
        json_object *alerts = member(result, "alerts");
        size_t n = alerts ? json_object_array_length(alerts) : 0;

        printf("\n%s\n", n ? "ALERTS (newest first)" : "ALERTS: none open");
        for (size_t i = 0; i < n; i++) {
                json_object *a = json_object_array_get_idx(alerts, i);

                printf("%-20s %-14s %-8s %s%s\n", client_get_string(a, "since", "-"),
                       client_get_string(a, "name", "?"), client_get_string(a, "status", "?"),
                       client_get_string(a, "summary", ""),
                       client_get_bool(a, "stale") ? " (node stale)" : "");
        }
}

/* Only when two node ids carry one name: such a name names neither. */
static void show_name_clashes(json_object *result)
{
        json_object *clashes = member(result, "name_clashes");
        size_t n = clashes ? json_object_array_length(clashes) : 0;

        if (n)
                printf("\nNAMES CARRIED BY MORE THAN ONE NODE (none is the head by that name)\n");
        for (size_t i = 0; i < n; i++) {
                json_object *c = json_object_array_get_idx(clashes, i), *ids = member(c, "node_ids");

                printf("%s:", client_get_string(c, "name", "?"));
                for (size_t k = 0; ids && k < json_object_array_length(ids); k++)
                        printf(" %s", json_object_get_string(json_object_array_get_idx(ids, k)));
                printf("\n");
        }
}

/* The newest collective NCCL probe each node coordinated (its "collective" section). */
static void show_collectives(json_object *result)
{
        json_object *nodes = member(result, "nodes");
        bool header = false;

        for (size_t i = 0; nodes && i < json_object_array_length(nodes); i++) {
                json_object *n = json_object_array_get_idx(nodes, i);
                json_object *c = member(member(n, "sections"), "collective"), *ranks = member(c, "nodes");

                if (!c)
                        continue;
                if (!header)
                        printf("\nCOLLECTIVE NCCL PROBES (the newest each node coordinated)\n");
                header = true;
                printf("%s at %s: %s, %d nodes", client_get_string(n, "name", "?"),
                       client_get_string(c, "at", "?"), client_get_string(c, "status", "?"),
                       client_get_int(c, "nranks"));
                if (member(c, "busbw_gbytes"))
                        printf(", %s %.0f bytes busbw %.2f GB/s", client_get_string(c, "op", "?"),
                               client_get_double(c, "bytes"), client_get_double(c, "busbw_gbytes"));
                if (member(c, "expected_busbw_gbytes"))
                        printf(", expected %.2f (%s)", client_get_double(c, "expected_busbw_gbytes"),
                               client_get_string(c, "expected_source", "?"));
                printf(", verdict %s\n", client_get_string(c, "verdict", "?"));
                if (member(c, "error"))
                        printf("    %s\n", client_get_string(c, "error", ""));
                printf("    ranks:");
                for (size_t k = 0; ranks && k < json_object_array_length(ranks); k++) {
                        json_object *r = json_object_array_get_idx(ranks, k);

                        printf(" %s %s (%s)", client_get_string(r, "name", "?"),
                               client_get_string(r, "status", "?"), client_get_string(r, "last_phase", "-"));
                }
                printf("\n");
        }
}

static void show_cluster(json_object *result)
{
        show_nodes(result);
        show_name_clashes(result);
        show_links(result);
        show_collectives(result);
        show_alerts(result);
}

/* What to show: the view, a matrix, or (--json) the daemon's result. */
struct cluster_look {
        const char *matrix;
        bool with_results; /* --json: each node's results section too */
};

/* One look. Returns the exit status. */
static int show_once(const struct client_options *o, const struct cluster_look *look)
{
        struct jsonrpc_response resp;
        json_object *params = NULL;
        int r;

        if (look->with_results) {
                params = json_object_new_object();
                json_object_object_add(params, "results", json_object_new_boolean(true));
        }
        r = client_call(o, "cluster", params, &resp);
        if (r < 0)
                return -r;
        if (o->json)
                client_print_json(resp.result);
        else if (look->matrix)
                cluster_matrix_print(stdout, resp.result, look->matrix);
        else
                show_cluster(resp.result);
        jsonrpc_response_done(&resp);
        return EXIT_OK;
}

static int watch(const struct client_options *o, const struct cluster_look *look)
{
        for (;;) {
                struct timespec interval = { WATCH_INTERVAL_SEC, 0 };
                time_t now = time(NULL);
                char when[32];
                int r;

                /* Home and clear: the next look replaces this one in place. */
                printf("\033[H\033[2J");
                strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
                printf("sparkc cluster, every %d s (Ctrl-C ends), %s\n\n", WATCH_INTERVAL_SEC, when);
                r = show_once(o, look);
                fflush(stdout);
                /* Ctrl-C during a look (its calls retry on EINTR) or the sleep: a clean end. */
                if (client_interrupted)
                        return EXIT_OK;
                if (r != EXIT_OK)
                        return r;
                if (nanosleep(&interval, NULL) < 0 && errno == EINTR)
                        return EXIT_OK;
        }
}

int cmd_cluster(const struct client_options *o, int argc, char **argv)
{
        struct cluster_look look = {};
        bool is_watch = false;
        int c;

        optind = 1;
        while ((c = getopt_long(argc, argv, cluster_options.short_options, cluster_options.long_options,
                                NULL)) >= 0) {
                switch (c) {
                case 'm':
                        if (!cluster_metric_of(optarg)) {
                                fprintf(stderr,
                                        "sparkc: cluster: --matrix takes a probe kind (%s), not \"%s\"\n",
                                        SPARKD_PROBE_KINDS, optarg);
                                return EXIT_DAEMON_ERROR;
                        }
                        look.matrix = optarg;
                        break;
                case 'w':
                        is_watch = true;
                        break;
                case 'r':
                        look.with_results = true;
                        break;
                default:
                        fprintf(stderr,
                                "usage: sparkc cluster [--matrix KIND] [--watch] [--json [--results]]\n");
                        return EXIT_DAEMON_ERROR;
                }
        }
        if (client_no_args("cluster", argc - optind + 1) < 0)
                return EXIT_DAEMON_ERROR;
        if (look.matrix && o->json) {
                fprintf(stderr, "sparkc: cluster: --json and --matrix are two outputs; choose one\n");
                return EXIT_DAEMON_ERROR;
        }
        if (look.with_results && !o->json) {
                fprintf(stderr, "sparkc: cluster: --results adds each node's own results to --json; "
                                "the view shows the newest of them per link already\n");
                return EXIT_DAEMON_ERROR;
        }
        if (is_watch && !isatty(STDOUT_FILENO)) {
                fprintf(stderr,
                        "sparkc: cluster: --watch redraws a terminal in place, and standard output is "
                        "not a terminal; run it without --watch (or with --json) from a program\n");
                return EXIT_DAEMON_ERROR;
        }
        return is_watch ? watch(o, &look) : show_once(o, &look);
}

static int verdict_exit(const char *verdict)
{
        if (strcmp(verdict, "ok") == 0)
                return DOCTOR_EXIT_OK;
        if (strcmp(verdict, "warning") == 0)
                return DOCTOR_EXIT_WARN;
        if (strcmp(verdict, "failed") == 0)
                return DOCTOR_EXIT_FAIL;
        return DOCTOR_EXIT_UNKNOWN;
}

/* What the node's summary says: the verdict and the checks that are not ok. */
static int show_summary_doctor(json_object *result)
{
        json_object *summary = member(result, "summary"), *checks = member(summary, "checks");
        const char *verdict = client_get_string(summary, "verdict", "unknown");
        char age[48];

        format_age(age, sizeof(age), client_get_double(result, "age_s"));
        printf("%s: %s (from its summary, %s old%s)\n", client_get_string(result, "name", "?"), verdict, age,
               client_get_bool(result, "stale") ? ", STALE" : "");
        if (client_get_string(result, "note", NULL))
                printf("note: %s\n", client_get_string(result, "note", ""));
        for (size_t i = 0; checks && i < json_object_array_length(checks); i++) {
                json_object *c = json_object_array_get_idx(checks, i);

                printf("  %-8s %s: %s\n", client_get_string(c, "status", "?"),
                       client_get_string(c, "id", "?"), client_get_string(c, "summary", ""));
        }
        return summary ? verdict_exit(verdict) : DOCTOR_EXIT_UNKNOWN;
}

int cluster_doctor_of_node(const struct client_options *o, const char *node)
{
        struct jsonrpc_response resp;
        json_object *params = json_object_new_object(), *doctor;
        int r;

        json_object_object_add(params, "node", json_object_new_string(node));
        r = client_call(o, "cluster-doctor", params, &resp);
        if (r < 0)
                return DOCTOR_EXIT_UNKNOWN;
        doctor = member(resp.result, "doctor");
        if (o->json) {
                client_print_json(resp.result);
                r = doctor ? verdict_exit(strcmp(client_get_string(doctor, "status", ""), "warn") == 0
                                                  ? "warning"
                                          : strcmp(client_get_string(doctor, "status", ""), "fail") == 0
                                                  ? "failed"
                                                  : "ok")
                           : verdict_exit(client_get_string(member(resp.result, "summary"), "verdict",
                                                            "unknown"));
        } else if (doctor) {
                printf("node %s (%s)\n", client_get_string(resp.result, "name", node),
                       strcmp(client_get_string(resp.result, "source", ""), "self") == 0
                               ? "this node's doctor"
                               : "its own doctor, asked over the peer channel");
                r = report_doctor(stdout, doctor);
        } else {
                r = show_summary_doctor(resp.result);
        }
        jsonrpc_response_done(&resp);
        return r;
}
