/* sparkc topology: the cluster's cabling as the daemon's topology method derives it, as a
 * table, JSON, a Graphviz graph, or a node's netplan file from the map's address plan (which
 * sparkd writes when asked, with --write). --from reads a map saved with `sparkc --json
 * topology` instead of asking the daemon: another node's plan, or a picture, offline. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "common/file_read.h"
#include "common/json_strict.h"
#include "common/macro.h"
#include "common/text_escape.h"
#include "common/topology_netplan.h"
#include "topology_render.h"

#define MAP_MAX_BYTES (16 << 20) /* a map of 254 nodes with 32 ports each is far below */

const struct command_options topology_options = {
        .short_options = "f:n",
        .long_options =
                (const struct option[]){
                        { "format", required_argument, NULL, 'f' },
                        { "netplan", no_argument, NULL, 'n' },
                        { "node", required_argument, NULL, 'N' },
                        { "write", no_argument, NULL, 'w' },
                        { "from", required_argument, NULL, 'F' },
                        {},
                },
};

static int usage(void)
{
        fprintf(stderr, "usage: sparkc topology [--format table|dot] [--netplan [--node NAME] [--write]] "
                        "[--from FILE]\n");
        return EXIT_DAEMON_ERROR;
}

static int load_map(const char *path, json_object **map)
{
        _cleanup_free_ char *text = NULL;
        enum json_strict_error error;
        char why[512];
        size_t len;
        int r;

        r = file_read_regular(AT_FDCWD, path, 0, MAP_MAX_BYTES, &text, &len, why, sizeof(why));
        if (r < 0) {
                fprintf(stderr, "sparkc: topology: %s\n", why);
                return r;
        }
        r = json_strict_parse(text, len, 32, map, &error, why, sizeof(why));
        if (r < 0) {
                fprintf(stderr, "sparkc: topology: %s: %s (expected the JSON of `sparkc --json topology`)\n",
                        path, why);
                return r;
        }
        return 0;
}

/* This node's id, as the daemon's status gives it, for --netplan without --node. */
static int self_id(const struct client_options *o, char *buf, size_t size)
{
        struct jsonrpc_response resp;
        int r = client_call(o, "status", NULL, &resp);

        if (r < 0)
                return r;
        snprintf(buf, size, "%s", client_get_string(resp.result, "node_id", ""));
        jsonrpc_response_done(&resp);
        return buf[0] ? 0 : -EXIT_DAEMON_ERROR;
}

static int print_netplan(json_object *map, const char *node)
{
        struct topology_netplan plan;
        _cleanup_free_ char *yaml = NULL;
        char why[640], id[64];

        if (topology_netplan_node_id(map, node, id, sizeof(id), why, sizeof(why)) < 0 ||
            topology_netplan_of(map, id, NULL, &plan, why, sizeof(why)) < 0) {
                fputs("sparkc: topology: ", stderr);
                escape_term(stderr, why);
                fputc('\n', stderr);
                return EXIT_DAEMON_ERROR;
        }
        yaml = topology_netplan_yaml(&plan);
        if (!yaml)
                return EXIT_DAEMON_ERROR;
        fputs(yaml, stdout);
        return EXIT_OK;
}

/* Asks the daemon to write this node's plan; it says what it wrote and what it refused. */
static int write_netplan(const struct client_options *o)
{
        struct jsonrpc_response resp;
        json_object *refused;
        int r = client_call(o, "topology-netplan-write", NULL, &resp);

        if (r < 0)
                return -r;
        if (o->json)
                client_print_json(resp.result);
        else {
                printf("%s %s\n", client_get_bool(resp.result, "written") ? "wrote" : "did not write",
                       client_get_string(resp.result, "path", "?"));
                refused = json_object_object_get(resp.result, "refused");
                for (size_t i = 0; refused && i < json_object_array_length(refused); i++) {
                        json_object *one = json_object_array_get_idx(refused, i);

                        printf("refused %s: %s\n", client_get_string(one, "netdev", "?"),
                               client_get_string(one, "why", ""));
                }
        }
        r = json_object_array_length(json_object_object_get(resp.result, "refused")) ? EXIT_DAEMON_ERROR
                                                                                     : EXIT_OK;
        jsonrpc_response_done(&resp);
        return r;
}

static int run(const struct client_options *o, const char *format, bool is_netplan, const char *node,
               json_object *map)
{
        char self[128];
        int r;

        if (is_netplan) {
                if (!node) {
                        r = self_id(o, self, sizeof(self));
                        if (r < 0)
                                return -r;
                        node = self;
                }
                return print_netplan(map, node);
        }
        if (o->json) {
                client_print_json(map);
                return EXIT_OK;
        }
        r = strcmp(format, "dot") == 0 ? topology_render_dot(stdout, map)
                                       : topology_render_table(stdout, map);
        if (r < 0) {
                fprintf(stderr, "sparkc: topology: the answer is not a topology map\n");
                return EXIT_DAEMON_ERROR;
        }
        return EXIT_OK;
}

int cmd_topology(const struct client_options *o, int argc, char **argv)
{
        const char *format = "table", *node = NULL, *from = NULL;
        bool is_netplan = false, is_write = false;
        struct jsonrpc_response resp = { 0 };
        json_object *map = NULL;
        int c, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, topology_options.short_options, topology_options.long_options,
                                NULL)) >= 0) {
                switch (c) {
                case 'f':
                        if (strcmp(optarg, "table") != 0 && strcmp(optarg, "dot") != 0) {
                                fprintf(stderr, "sparkc: topology: --format is table or dot, not %s\n",
                                        optarg);
                                return EXIT_DAEMON_ERROR;
                        }
                        format = optarg;
                        break;
                case 'n':
                        is_netplan = true;
                        break;
                case 'N':
                        node = optarg;
                        break;
                case 'w':
                        is_write = true;
                        break;
                case 'F':
                        from = optarg;
                        break;
                default:
                        return usage();
                }
        }
        if (optind < argc || ((node || is_write) && !is_netplan) || (is_write && (node || from)))
                return usage();
        if (is_write)
                return write_netplan(o);
        if (from) {
                if (load_map(from, &map) < 0)
                        return EXIT_DAEMON_ERROR;
                /* A saved map is outside text too: escaped for the terminal as a reply is. */
                if (!o->json && !is_netplan && escape_term_json(map) < 0) {
                        json_object_put(map);
                        return EXIT_DAEMON_ERROR;
                }
        } else {
                r = client_call(o, "topology", NULL, &resp);
                if (r < 0)
                        return -r;
                map = json_object_get(resp.result);
                jsonrpc_response_done(&resp);
        }
        r = run(o, format, is_netplan, node, map);
        json_object_put(map);
        return r;
}
