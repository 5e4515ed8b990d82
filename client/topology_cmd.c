/* sparkc topology: the cluster's cabling as the daemon's topology method derives it, as a
 * table, JSON, a Graphviz graph, or a node's netplan file from the map's address plan (which
 * sparkd plans and sparkc, run as root, writes with --write). --from reads a map saved with `sparkc --json
 * topology` instead of asking the daemon: another node's plan, or a picture, offline. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "commands.h"
#include "common/file_read.h"
#include "common/json_strict.h"
#include "common/macro.h"
#include "common/text_check.h"
#include "common/text_escape.h"
#include "common/topology_netplan.h"
#include "topology_render.h"

#define MAP_MAX_BYTES     (16 << 20) /* a map of 254 nodes with 32 ports each is far below */
#define NETPLAN_FILE_NAME "60-sparkd-fabric.yaml"
#define NETPLAN_MAX_BYTES (1 << 20) /* a node's file, 32 netdevs with their addresses, is far below */

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

/* The daemon's path for the file: its host root's /etc/netplan/60-sparkd-fabric.yaml. sparkc
 * writes there as root, so it takes nothing else: absolute, that name in a folder named netplan,
 * no "." or ".." step, no empty step, clean text. */
static bool is_netplan_path(const char *path)
{
        static const char tail[] = "/netplan/" NETPLAN_FILE_NAME;
        size_t len = strlen(path);

        return path[0] == '/' && len > sizeof(tail) - 1 && len < PATH_MAX &&
               strcmp(path + len - (sizeof(tail) - 1), tail) == 0 && !strstr(path, "//") &&
               !strstr(path, "/./") && !strstr(path, "/../") && text_is_clean(path, PATH_MAX);
}

/* text to path, atomically: a temporary file beside it (never followed through a symlink), mode
 * 600, synced, renamed over it, the folder synced. A symlink where the file goes is refused, not
 * replaced: whoever made it meant the file to live elsewhere. */
static int write_netplan_file(const char *path, const char *text, size_t len)
{
        _cleanup_free_ char *dir = strndup(path, strrchr(path, '/') - path);
        const char *name = strrchr(path, '/') + 1;
        _cleanup_close_ int dfd = -EBADF, fd = -EBADF;
        char tmp[NAME_MAX + 1];
        struct stat st;
        size_t done = 0;

        if (!dir)
                return -ENOMEM;
        snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) {
                fprintf(stderr, "sparkc: topology: cannot open %s: %m (is netplan installed?)\n", dir);
                return -errno;
        }
        if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
                fprintf(stderr,
                        "sparkc: topology: %s is a symbolic link: not written through it (remove it to "
                        "let sparkc write the file)\n",
                        path);
                return -ELOOP;
        }
        (void)unlinkat(dfd, tmp, 0);
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
                fprintf(stderr, "sparkc: topology: cannot create %s/%s: %m\n", dir, tmp);
                return -errno;
        }
        while (done < len) {
                ssize_t n = write(fd, text + done, len - done);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        break;
                done += (size_t)n;
        }
        if (done < len || fchmod(fd, 0600) < 0 || fsync(fd) < 0 || close(fd) < 0) {
                fd = -EBADF;
                fprintf(stderr, "sparkc: topology: cannot write %s/%s: %m\n", dir, tmp);
                (void)unlinkat(dfd, tmp, 0);
                return -EIO;
        }
        fd = -EBADF;
        if (renameat(dfd, tmp, dfd, name) < 0) {
                fprintf(stderr, "sparkc: topology: cannot rename %s/%s to %s: %m\n", dir, tmp, path);
                (void)unlinkat(dfd, tmp, 0);
                return -errno;
        }
        /* The rename is durable only once the folder's entry is on disk too. */
        if (fsync(dfd) < 0) {
                fprintf(stderr, "sparkc: topology: cannot sync %s: %m\n", dir);
                return -errno;
        }
        return 0;
}

/* The daemon plans this node's file (it runs as user sparkd and may not write /etc/netplan);
 * sparkc, run as root, writes what it planned, and says what it wrote and what was refused. */
static int write_netplan(const struct client_options *o)
{
        struct client_options raw;
        struct jsonrpc_response resp;
        json_object *refused, *yaml;
        const char *path;
        bool is_written = false;
        int r;

        if (geteuid() != 0) {
                fprintf(stderr, "sparkc: topology: --write writes /etc/netplan/" NETPLAN_FILE_NAME
                                ", which only root may: run it with sudo (sparkc topology --netplan "
                                "prints the file without writing it)\n");
                return EXIT_DAEMON_ERROR;
        }
        /* The file's text as the daemon sent it: not escaped for the terminal, as a reply shown
         * as text is; what of it is shown is escaped below. */
        raw = *o;
        raw.json = true;
        r = client_call(&raw, "topology-netplan-write", NULL, &resp);
        if (r < 0)
                return -r;
        path = client_get_string(resp.result, "path", "");
        yaml = json_object_object_get(resp.result, "yaml");
        if (!is_netplan_path(path) ||
            (yaml && (!json_object_is_type(yaml, json_type_string) ||
                      (size_t)json_object_get_string_len(yaml) != strlen(json_object_get_string(yaml)) ||
                      json_object_get_string_len(yaml) > NETPLAN_MAX_BYTES))) {
                fputs("sparkc: topology: the daemon's plan is not a netplan file for ", stderr);
                escape_term(stderr, path);
                fprintf(stderr,
                        " (expected text of at most %d bytes for a path ending in "
                        "/netplan/" NETPLAN_FILE_NAME ")\n",
                        NETPLAN_MAX_BYTES);
                jsonrpc_response_done(&resp);
                return EXIT_DAEMON_ERROR;
        }
        if (yaml) {
                r = write_netplan_file(path, json_object_get_string(yaml), json_object_get_string_len(yaml));
                if (r < 0) {
                        jsonrpc_response_done(&resp);
                        return EXIT_DAEMON_ERROR;
                }
                is_written = true;
        }
        refused = json_object_object_get(resp.result, "refused");
        if (o->json) {
                json_object_object_add(resp.result, "written", json_object_new_boolean(is_written));
                json_object_object_del(resp.result, "yaml");
                client_print_json(resp.result);
        } else {
                printf("%s %s\n", is_written ? "wrote" : "did not write", path);
                for (size_t i = 0; refused && i < json_object_array_length(refused); i++) {
                        json_object *one = json_object_array_get_idx(refused, i);

                        fputs("refused ", stdout);
                        escape_term(stdout, client_get_string(one, "netdev", "?"));
                        fputs(": ", stdout);
                        escape_term(stdout, client_get_string(one, "why", ""));
                        fputc('\n', stdout);
                }
        }
        r = refused && json_object_array_length(refused) ? EXIT_DAEMON_ERROR : EXIT_OK;
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
