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
