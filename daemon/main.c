/* sparkd's entry point: command line, config check, daemonizing and socket activation. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "common/macro.h"
#include "common/proto.h"
#include "config.h"
#include "daemon.h"
#include "daemon/base/child.h"
#include "daemon/peers/peer_tls.h"

static void print_help(void)
{
        printf("Usage: sparkd [OPTION]...\n"
               "Keep a GPU node's fabric set up right and probe it; serve the results on a UNIX socket.\n"
               "\n"
               "  -c, --config=FILE     config file (default %s); drop-ins are read from FILE.d/*.conf\n"
               "  -f, --foreground      stay in the foreground (what systemd runs)\n"
               "      --socket=PATH     API socket (default from config, %s)\n"
               "      --state-dir=DIR   state directory (default from config, %s)\n"
               "      --log-target=T    auto, journal or stderr (default auto: the journal when systemd\n"
               "                        connected stderr to it, else stderr)\n"
               "      --check-config    read the config, print every error as FILE:LINE: message, exit\n"
               "  -h, --help            show this help and exit\n"
               "      --version         show the version and exit\n"
               "\n"
               "Signals: SIGHUP re-reads the config (a config with errors is refused and the running one "
               "kept);\n"
               "SIGTERM and SIGINT stop the daemon and remove its socket.\n"
               "Exit status: 0 after a clean stop, 1 on a config or start-up error.\n",
               SPARKD_CONFIG_PATH, SPARKD_SOCKET_PATH, SPARKD_STATE_DIR);
}

enum {
        OPT_SOCKET = 0x100,
        OPT_STATE_DIR,
        OPT_CHECK_CONFIG,
        OPT_VERSION,
        OPT_LOG_TARGET,
};

static int parse_args(int argc, char **argv, struct sparkd_options *o, bool *check_config)
{
        static const struct option options[] = {
                { "config", required_argument, NULL, 'c' },
                { "foreground", no_argument, NULL, 'f' },
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "state-dir", required_argument, NULL, OPT_STATE_DIR },
                { "log-target", required_argument, NULL, OPT_LOG_TARGET },
                { "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                {},
        };
        int c;

        *o = (struct sparkd_options){ .config_path = SPARKD_CONFIG_PATH, .log_target = LOG_TARGET_AUTO };
        while ((c = getopt_long(argc, argv, "c:fh", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        o->config_path = optarg;
                        o->config_path_explicit = true;
                        break;
                case 'f':
                        o->foreground = true;
                        break;
                case OPT_SOCKET:
                        if (optarg[0] != '/') {
                                fprintf(stderr, "sparkd: --socket needs an absolute path, not \"%s\"\n",
                                        optarg);
                                return -EINVAL;
                        }
                        o->socket_path = optarg;
                        break;
                case OPT_STATE_DIR:
                        if (optarg[0] != '/') {
                                fprintf(stderr, "sparkd: --state-dir needs an absolute path, not \"%s\"\n",
                                        optarg);
                                return -EINVAL;
                        }
                        o->state_dir = optarg;
                        break;
                case OPT_LOG_TARGET:
                        if (log_target_from_string(optarg, &o->log_target) < 0) {
                                fprintf(stderr, "sparkd: --log-target must be auto, journal or stderr\n");
                                return -EINVAL;
                        }
                        break;
                case OPT_CHECK_CONFIG:
                        *check_config = true;
                        break;
                case 'h':
                        print_help();
                        return 0;
                case OPT_VERSION:
                        printf("sparkd %s (api %d)\n", SPARKD_VERSION, SPARKD_API_VERSION);
                        return 0;
                default:
                        fprintf(stderr, "Try 'sparkd --help'.\n");
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "sparkd: unexpected argument \"%s\"\nTry 'sparkd --help'.\n", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

static int load_config(const struct sparkd_options *o, bool check_only, struct sparkd_config **ret)
{
        struct conf_errors errors;
        int r = conf_load(o->config_path, o->config_path_explicit, ret, &errors);

        for (size_t i = 0; i < errors.n; i++) {
                _cleanup_free_ char *line = conf_error_format(&errors.v[i]);

                fprintf(stderr, "%s\n", line ? line : "out of memory");
        }
        conf_errors_clear(&errors);
        if (r < 0)
                return r;
        if (check_only) {
                if (!(*ret)->path_found)
                        printf("%s: not found, built-in defaults apply\n", (*ret)->path);
                for (char **f = (*ret)->files_read; f && *f; f++)
                        printf("%s: ok\n", *f);
        }
        return 0;
}

/* systemd may hand over the API socket (sparkd.socket). */
static int take_listen_fd(void)
{
        int n = sd_listen_fds(1);

        if (n <= 0)
                return n < 0 ? n : -1;
        if (n > 1) {
                log_error("systemd passed %d sockets; sparkd takes exactly one (the API socket)", n);
                return -EINVAL;
        }
        if (sd_is_socket_unix(SD_LISTEN_FDS_START, SOCK_STREAM, 1, NULL, 0) <= 0) {
                log_error("the socket systemd passed is not a listening UNIX stream socket");
                return -EINVAL;
        }
        return SD_LISTEN_FDS_START;
}

/* Forks into the background. The parent waits until the child says it is serving (one byte on
 * the pipe), so "sparkd" returns success only for a daemon that really started. */
static int daemonize(int *ready_fd)
{
        int pipefd[2];
        pid_t pid;
        char byte;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid > 0) {
                close(pipefd[1]);
                if (read(pipefd[0], &byte, 1) == 1)
                        _exit(EXIT_SUCCESS);
                _exit(EXIT_FAILURE);
        }
        close(pipefd[0]);
        if (setsid() < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid > 0)
                _exit(EXIT_SUCCESS);
        if (chdir("/") < 0)
                return -errno;
        *ready_fd = pipefd[1];
        return 0;
}

static void detach_stdio(int ready_fd)
{
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);

        if (null >= 0) {
                dup2(null, STDIN_FILENO);
                dup2(null, STDOUT_FILENO);
                if (log_is_journal())
                        dup2(null, STDERR_FILENO);
                close(null);
        }
        (void)!write(ready_fd, "1", 1);
        close(ready_fd);
}

int main(int argc, char **argv)
{
        struct sparkd_options options;
        struct sparkd_config *config = NULL;
        struct sparkd *d = NULL;
        bool check_config = false;
        int ready_fd = -1, listen_fd, r;

        /* A large reply (a history of 1,000 results) makes and frees buffers of a megabyte. With
         * glibc's sliding threshold the first one freed moves the later ones onto the heap, where
         * they stay resident once freed; a fixed threshold keeps them mapped and given back. */
        mallopt(M_MMAP_THRESHOLD, 128 * 1024);
        /* Freed chunks of up to 128 bytes (most of a json-c tree) wait in fast bins without
         * merging with their neighbours, so the trees that peers' messages and the doctor make
         * and free every few seconds leave the heap resident in pieces that a trim cannot give
         * back; and each growth of the heap would take 128 KiB more than it needs. At 64 nodes
         * the two took some 0.7 MiB of a daemon's private memory; turned off, they cost 1 % more
         * CPU at rest and some 15 % of the metrics calls answered a second under load. */
        mallopt(M_MXFAST, 0);
        mallopt(M_TOP_PAD, 0);
        if (peer_tls_init() < 0) {
                fprintf(stderr, "sparkd: cannot initialise OpenSSL\n");
                return EXIT_FAILURE;
        }
        r = parse_args(argc, argv, &options, &check_config);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        log_open(options.log_target, !options.foreground && !check_config);

        r = load_config(&options, check_config, &config);
        if (r < 0)
                return EXIT_FAILURE;
        if (check_config) {
                conf_free(config);
                return EXIT_SUCCESS;
        }

        if (!options.foreground) {
                r = daemonize(&ready_fd);
                if (r < 0) {
                        log_error("cannot go into the background: %s", strerror(-r));
                        conf_free(config);
                        return EXIT_FAILURE;
                }
        }
        {
                rlim_t soft, hard;

                r = child_raise_nofile(&soft, &hard);
                if (r < 0)
                        log_warning("cannot raise the limit on open files: %s", strerror(-r));
                else if (soft < 4096)
                        log_warning("open files are limited to %llu here: a busy cluster may need more "
                                    "(LimitNOFILE= in the unit)",
                                    (unsigned long long)soft);
        }
        listen_fd = take_listen_fd();
        if (listen_fd < -1) {
                conf_free(config);
                return EXIT_FAILURE;
        }
        r = sparkd_new(&options, config, listen_fd, &d);
        if (r < 0)
                return EXIT_FAILURE;
        if (ready_fd >= 0)
                detach_stdio(ready_fd);
        r = sparkd_run(d);
        sparkd_free(d);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
