/* sparkc export: the job plan written where a launcher reads it, atomically; and the gate,
 * sparkc env --check --for sparkrun|svd FILE. */
#include "commands.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_read.h"
#include "common/jsonrpc.h"
#include "common/macro.h"
#include "launcher_check.h"

#define MAX_FILE_BYTES (64 * 1024)

const struct command_options export_options = {
        .short_options = "n:do:",
        .long_options =
                (const struct option[]){
                        { "name", required_argument, NULL, 'n' },
                        { "default", no_argument, NULL, 'd' },
                        { "output", required_argument, NULL, 'o' },
                        {},
                },
};

/* The plan and this node's variables for it, from the daemon. */
static int fetch_plan(const struct client_options *o, struct launcher_plan *p)
{
        struct jsonrpc_response plan, env, map;
        json_object *params = json_object_new_object();
        char why[512];
        int r;

        r = client_call(o, "job-nodes", NULL, &plan);
        if (r < 0) {
                json_object_put(params);
                return r;
        }
        json_object_object_add(params, "mode", json_object_new_string("auto"));
        json_object_object_add(params, "for", json_object_new_string("torchrun"));
        r = client_call(o, "env", params, &env);
        if (r < 0) {
                jsonrpc_response_done(&plan);
                return r;
        }
        r = launcher_plan_read(plan.result, env.result, p, why, sizeof(why));
        jsonrpc_response_done(&plan);
        jsonrpc_response_done(&env);
        /* The cabling map: each cable's addresses, for CLUSTER_LINKS on a ring. */
        if (r == 0 && client_call(o, "topology", NULL, &map) == 0) {
                r = launcher_plan_read_map(map.result, p, why, sizeof(why));
                jsonrpc_response_done(&map);
        }
        if (r < 0)
                fprintf(stderr, "sparkc: the daemon's plan: %s\n", why);
        return r;
}

/* text to dir/name: a temporary file beside it, written, synced, renamed over it, the directory
 * synced; a reader sees the old file or the new one, never a part. */
static int write_atomic(const char *dir, const char *name, const char *text, size_t len)
{
        char path[4096], tmp[4096];
        _cleanup_close_ int dfd = -1;
        int fd;

        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path) ||
            (size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name) >= sizeof(tmp))
                return -ENAMETOOLONG;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "sparkc: export: cannot create a file in %s: %m\n", dir);
                return -errno;
        }
        if (write(fd, text, len) != (ssize_t)len || fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
                fprintf(stderr, "sparkc: export: cannot write %s: %m\n", tmp);
                close(fd);
                unlink(tmp);
                return -EIO;
        }
        close(fd);
        if (rename(tmp, path) < 0) {
                fprintf(stderr, "sparkc: export: cannot rename %s to %s: %m\n", tmp, path);
                unlink(tmp);
                return -errno;
        }
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
                fsync(dfd);
        printf("%s\n", path);
        return 0;
}

static int mkdir_p(char *path)
{
        for (char *s = path + 1; *s; s++) {
                if (*s != '/')
                        continue;
                *s = '\0';
                if (mkdir(path, 0755) < 0 && errno != EEXIST) {
                        *s = '/';
                        return -errno;
                }
                *s = '/';
        }
        return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

/* sparkrun's directory: $XDG_CONFIG_HOME/sparkrun/clusters, else ~/.config/sparkrun/clusters. */
static int sparkrun_dir(const char *output, char *dir, size_t size)
{
        const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");

        if (output)
                snprintf(dir, size, "%s", output);
        else if (xdg && xdg[0] == '/')
                snprintf(dir, size, "%s/sparkrun/clusters", xdg);
        else if (home && home[0] == '/')
                snprintf(dir, size, "%s/.config/sparkrun/clusters", home);
        else {
                fprintf(stderr, "sparkc: export sparkrun: no $HOME: say where with --output DIR\n");
                return -EINVAL;
        }
        if (mkdir_p(dir) < 0) {
                fprintf(stderr, "sparkc: export sparkrun: cannot create %s: %m\n", dir);
                return -EIO;
        }
        return 0;
}

static int export_to(const struct launcher_plan *p, enum launcher_format format, const char *name,
                     const char *output, bool is_default)
{
        _cleanup_free_ char *text = NULL;
        char why[512], dir[3072], file[128];
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        int r;

        if (!f)
                return EXIT_DAEMON_ERROR;
        r = format == LAUNCHER_SPARKRUN ? launcher_write_sparkrun(f, p, name, why, sizeof(why))
                                        : launcher_write_svd(f, p, why, sizeof(why));
        if (fclose(f) != 0 || r < 0) {
                fprintf(stderr, "sparkc: export %s: refused: %s\n",
                        format == LAUNCHER_SPARKRUN ? "sparkrun" : "svd", r < 0 ? why : "out of memory");
                return EXIT_DAEMON_ERROR;
        }
        if (format == LAUNCHER_SVD) {
                if (!output)
                        return fwrite(text, 1, len, stdout) == len ? EXIT_OK : EXIT_DAEMON_ERROR;
                {
                        _cleanup_free_ char *copy = strdup(output);
                        const char *slash;

                        if (!copy)
                                return EXIT_DAEMON_ERROR;
                        slash = strrchr(copy, '/');
                        if (slash == copy)
                                snprintf(dir, sizeof(dir), "/");
                        else
                                snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - copy) : 1,
                                         slash ? copy : ".");
                        snprintf(file, sizeof(file), "%s", slash ? slash + 1 : copy);
                }
                return write_atomic(dir, file, text, len) < 0 ? EXIT_DAEMON_ERROR : EXIT_OK;
        }
        if (sparkrun_dir(output, dir, sizeof(dir)) < 0)
                return EXIT_DAEMON_ERROR;
        snprintf(file, sizeof(file), "%s.yaml", name);
        if (write_atomic(dir, file, text, len) < 0)
                return EXIT_DAEMON_ERROR;
        /* sparkrun reads the default cluster's name, stripped, from clusters/.default. */
        if (is_default && write_atomic(dir, ".default", name, strlen(name)) < 0)
                return EXIT_DAEMON_ERROR;
        return EXIT_OK;
}

int cmd_export(const struct client_options *o, int argc, char **argv)
{
        _cleanup_free_ struct launcher_plan *p = calloc(1, sizeof(*p));
        const char *name = "sparkd", *output = NULL;
        enum launcher_format format;
        bool is_default = false, named = false;
        int c;

        optind = 1;
        while ((c = getopt_long(argc, argv, export_options.short_options, export_options.long_options,
                                NULL)) >= 0) {
                switch (c) {
                case 'n':
                        name = optarg;
                        named = true;
                        break;
                case 'd':
                        is_default = true;
                        break;
                case 'o':
                        output = optarg;
                        break;
                default:
                        fprintf(stderr,
                                "usage: sparkc export sparkrun [--name NAME] [--default] [--output DIR]\n"
                                "       sparkc export svd [--output FILE]\n");
                        return EXIT_DAEMON_ERROR;
                }
        }
        if (optind + 1 != argc || launcher_format_from_string(argv[optind], &format) < 0) {
                fprintf(stderr, "sparkc: export: name the launcher: sparkrun or svd\n");
                return EXIT_DAEMON_ERROR;
        }
        if (format == LAUNCHER_SVD && (named || is_default)) {
                fprintf(stderr, "sparkc: export svd: --name and --default are sparkrun's\n");
                return EXIT_DAEMON_ERROR;
        }
        if (!p || fetch_plan(o, p) < 0)
                return EXIT_DAEMON_ERROR;
        return export_to(p, format, name, output, is_default);
}

int cmd_env_check_file(const struct client_options *o, const char *launcher, const char *path)
{
        _cleanup_free_ struct launcher_plan *p = calloc(1, sizeof(*p));
        _cleanup_free_ char *text = NULL;
        enum launcher_format format;
        char why[512];
        size_t len;
        int r;

        if (launcher_format_from_string(launcher, &format) < 0) {
                fprintf(stderr, "sparkc: env --check: --for is sparkrun or svd, with the file to check\n");
                return ENV_CHECK_EXIT_UNKNOWN;
        }
        if (file_read_regular(AT_FDCWD, path, 0, MAX_FILE_BYTES, &text, &len, why, sizeof(why)) < 0) {
                fprintf(stderr, "sparkc: env --check: %s\n", why);
                return ENV_CHECK_EXIT_UNKNOWN;
        }
        if (!p || fetch_plan(o, p) < 0)
                return ENV_CHECK_EXIT_UNKNOWN;
        r = launcher_check(stdout, format, text, path, p);
        return r == 0 ? ENV_CHECK_EXIT_OK : r == -ENOMEM ? ENV_CHECK_EXIT_UNKNOWN : ENV_CHECK_EXIT_ERROR;
}
