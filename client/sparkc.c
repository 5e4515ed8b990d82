/* sparkc: the command-line client of sparkd's control API. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "commands.h"
#include "common/cluster_key.h"
#include "common/proto.h"
#include "common/strutil.h"
#include "config.h"
#include "daemon_names.h"

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
        printf("\nProbe kinds: " SPARKD_PROBE_KINDS " (sparkc probe-kinds: those this sparkd can run)\n"
               "Events (sparkc watch): " SPARKD_EVENTS "\n"
               "Methods that change state need root or the admin group (sparkd-admin): " SPARKD_ADMIN_METHODS
               "\n\n");
        exit_status_print_help(stdout);
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
