/* sparkc hostfile: the nodes a job may start on, in the format of the launcher that reads it. */
#include "commands.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonrpc.h"
#include "common/strutil.h"
#include "report.h"

const struct command_options hostfile_options = {
        .short_options = "f:s:",
        .long_options =
                (const struct option[]){
                        { "format", required_argument, NULL, 'f' },
                        { "slots", required_argument, NULL, 's' },
                        {},
                },
};

int cmd_hostfile(const struct client_options *o, int argc, char **argv)
{
        enum hostfile_format format = HOSTFILE_OPENMPI;
        struct jsonrpc_response resp;
        uint64_t slots = 1; /* one GPU per Spark: one rank per node unless told */
        int c, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, hostfile_options.short_options, hostfile_options.long_options,
                                NULL)) >= 0) {
                switch (c) {
                case 'f':
                        if (hostfile_format_from_string(optarg, &format) < 0) {
                                fprintf(stderr,
                                        "sparkc: hostfile: --format is openmpi, mpich or plain, not "
                                        "\"%s\"\n",
                                        optarg);
                                return EXIT_DAEMON_ERROR;
                        }
                        break;
                case 's':
                        if (parse_uint64(optarg, 10, 1, 4096, &slots) < 0) {
                                fprintf(stderr,
                                        "sparkc: hostfile: --slots is a number from 1 to 4096, not \"%s\"\n",
                                        optarg);
                                return EXIT_DAEMON_ERROR;
                        }
                        break;
                default:
                        fprintf(stderr,
                                "usage: sparkc hostfile [--format openmpi|mpich|plain] [--slots N]\n");
                        return EXIT_DAEMON_ERROR;
                }
        }
        if (client_no_args("hostfile", argc - optind + 1) < 0)
                return EXIT_DAEMON_ERROR;
        r = client_call(o, "job-nodes", NULL, &resp);
        if (r < 0)
                return -r;
        if (o->json)
                client_print_json(resp.result);
        else
                r = report_hostfile(stdout, stderr, resp.result, format, (unsigned)slots);
        jsonrpc_response_done(&resp);
        /* An empty hostfile would start nothing: say so with the status too. */
        return r <= 0 && !o->json ? EXIT_DAEMON_ERROR : EXIT_OK;
}

static const char *text_of(json_object *o, const char *key, const char *fallback)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : fallback;
}

/* The plan whole: digest, head, plane, members in rank order, the nodes left out and why. */
static int report_plan(FILE *out, json_object *plan)
{
        json_object *nodes = NULL, *left = NULL, *head = NULL, *rank = NULL;
        size_t n;

        json_object_object_get_ex(plan, "nodes", &nodes);
        json_object_object_get_ex(plan, "left_out", &left);
        json_object_object_get_ex(plan, "head", &head);
        json_object_object_get_ex(plan, "rank", &rank);
        n = nodes ? json_object_array_length(nodes) : 0;
        fprintf(out, "plan %s: %zu node%s\n", text_of(plan, "digest", "?"), n, n == 1 ? "" : "s");
        fputs("head: ", out);
        if (head) {
                report_put_text(out, text_of(head, "name", "?"));
                fprintf(out, " at %s: ", text_of(head, "address", "?"));
                report_put_text(out, text_of(head, "why", ""));
        } else
                report_put_text(out, text_of(plan, "error", "none"));
        fputs("\nrendezvous and bootstrap on ", out);
        report_put_text(out, text_of(plan, "plane_why", "?"));
        fputc('\n', out);
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(nodes, i), *self;

                fprintf(out, "rank %zu  ", i);
                report_put_text(out, text_of(e, "name", "?"));
                fprintf(out, "  %s (%s)%s\n", text_of(e, "address", "?"), text_of(e, "ifname", "?"),
                        json_object_object_get_ex(e, "self", &self) && json_object_get_boolean(self)
                                ? "  this node"
                                : "");
        }
        for (size_t i = 0; left && i < json_object_array_length(left); i++) {
                json_object *l = json_object_array_get_idx(left, i);

                fputs("left out ", out);
                report_put_text(out, text_of(l, "name", "?"));
                fputs(": ", out);
                report_put_text(out, text_of(l, "reason", "?"));
                fputc('\n', out);
        }
        return head && rank ? EXIT_OK : EXIT_DAEMON_ERROR;
}

int cmd_plan(const struct client_options *o, int argc, char **argv)
{
        struct jsonrpc_response resp;
        int r;

        if (client_no_args("plan", argc) < 0)
                return EXIT_DAEMON_ERROR;
        r = client_call(o, "job-nodes", NULL, &resp);
        if (r < 0)
                return -r;
        if (o->json) {
                client_print_json(resp.result);
                r = EXIT_OK;
        } else
                r = report_plan(stdout, resp.result);
        jsonrpc_response_done(&resp);
        return r;
}
