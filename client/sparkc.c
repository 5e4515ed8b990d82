/* sparkc: the command-line client of sparkd's control API. */
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
#include "global_options.h"

struct command {
        const char *name;
        const char *summary;
        int (*run)(const struct client_options *o, int argc, char **argv);
        const struct command_options *options;
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
               "Global options may also follow the command, among its own options.\n"
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
        { "env [--mode M] [--format F] [--force] [--for F] [--check]",
          "NCCL/UCX/MPI/Gloo variables for this node (eval \"$(sparkc env)\"); --for "
          "torchrun|ray|vllm|sglang|mpi "
          "adds the framework's address, rendezvous and rank; --check judges this shell's variables, NCCL's "
          "config files and memlock limit (exit 0 ok, 1 warnings, 2 errors); --check --for sparkrun|svd "
          "FILE "
          "compares a launcher's file with the plan (exit 0 matches, 2 each difference and its fix)",
          cmd_env, &env_options },
        { "hostfile [--format openmpi|mpich|plain] [--slots N]",
          "the job plan's members, this node first, by their addresses on the plan's plane (slots=1); "
          "the plan's digest and the nodes left out on stderr",
          cmd_hostfile, &hostfile_options },
        { "plan",
          "the job plan, the same on every node that sees the same cluster: digest, head, ranks, "
          "rendezvous plane and why, the nodes left out and why (exit 0 when this node is a member)",
          cmd_plan },
        { "export sparkrun|svd [--name NAME] [--default] [--output DIR|FILE]",
          "the job plan as sparkrun's cluster file (hosts in rank order, topology) or spark-vllm-docker's "
          ".env for this node, written atomically; refused, with why, where the launcher cannot hold the "
          "plan",
          cmd_export, &export_options },
        { "doctor [--format text|line|npd] [--check ID] [--node NAME]",
          "check the node's fabric set-up; exit 0 ok, 1 warn, 2 fail, 3 unknown (npd: 0 ok, 1 problem, 2 "
          "unknown)",
          cmd_doctor, &doctor_options },
        { "topology [--format table|dot] [--netplan [--node NAME] [--write]] [--from FILE]",
          "the cluster's cabling: shape, links, wiring findings, address plan (netplan)", cmd_topology,
          &topology_options },
        { "peers", "the other nodes: state, the local port that reaches each, MTU at both ends", cmd_peers },
        { "cluster [--matrix KIND] [--watch] [--json [--results]]",
          "every node: verdict, checks not ok, version, age of its data; each link both ways; open alerts",
          cmd_cluster, &cluster_options },
        { "neighbours", "what is at the far end of each fabric port (lldpd, or the peer channel without it)",
          cmd_neighbours },
        { "probe --peer NAME [--kind K|all] [--duration S] [--size B] [--streams N] [--count N] "
          "[--mode M] [--env NAME=VALUE] [--param NAME=VALUE]",
          "measure the link to a peer with one probe kind or all; with --kind nccl --all (or --nodes "
          "A,B,...) instead of --peer, one NCCL collective across the job plan's nodes; exit 0 ok, 1 "
          "degraded, 2 failed",
          cmd_probe, &probe_options },
        { "probe-kinds", "the probe kinds this sparkd has, and the parameters each takes", cmd_probe_kinds },
        { "history [--peer NAME] [--kind K] [--limit N]", "earlier probe results, newest first", cmd_history,
          &history_options },
        { "metrics", "Prometheus text exposition (links, peers, probe results, doctor checks, GID watch)",
          cmd_metrics },
        { "keygen [--force] [FILE]", "write a new cluster key (default " CLUSTER_KEY_PATH ")", cmd_keygen,
          &keygen_options },
        { "watch [EVENT]...", "print events as they happen (all, or the types named)", cmd_watch },
        {},
};

static void on_interrupt(int sig)
{
        /* Leaves poll() with EINTR so watch ends with a clean exit code; a command that loops
         * and may be inside a call that retries on EINTR reads the flag. */
        client_interrupted = 1;
}

int main(int argc, char **argv)
{
        struct client_options o = { .timeout_ms = 10000 };
        struct sigaction sa = { .sa_handler = on_interrupt };
        bool help = false, version = false;
        int at;

        o.socket_path = getenv(SPARKD_SOCKET_ENV);
        if (str_is_empty(o.socket_path))
                o.socket_path = SPARKD_SOCKET_PATH;
        at = global_options_before(&o, argc, argv, &help, &version);
        if (at < 0) {
                fprintf(stderr, "Try 'sparkc --help'.\n");
                return EXIT_DAEMON_ERROR;
        }
        if (help) {
                print_help();
                return EXIT_OK;
        }
        if (version) {
                printf("sparkc %s (api %d)\n", SPARKD_VERSION, SPARKD_API_VERSION);
                return EXIT_OK;
        }
        if (at >= argc) {
                print_help();
                return EXIT_DAEMON_ERROR;
        }
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        for (const struct command *cmd = commands; cmd->name; cmd++) {
                size_t n = strcspn(cmd->name, " ");
                int words;

                if (strlen(argv[at]) != n || strncmp(cmd->name, argv[at], n) != 0)
                        continue;
                if (wants_help(argc - at, argv + at)) {
                        printf("Usage: sparkc [OPTION]... %s\n%s\n", cmd->name, cmd->summary);
                        return EXIT_OK;
                }
                words = global_options_after(&o, argc - at, argv + at, cmd->options);
                if (words < 0) {
                        fprintf(stderr, "Try 'sparkc --help'.\n");
                        return EXIT_DAEMON_ERROR;
                }
                return cmd->run(&o, words, argv + at);
        }
        fprintf(stderr, "sparkc: unknown command \"%s\"\nTry 'sparkc --help'.\n", argv[at]);
        return EXIT_DAEMON_ERROR;
}
