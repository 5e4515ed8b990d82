/* sparkc fabric, env and doctor: the RDMA fabric, the environment for NCCL on it, its checks. */
#include "commands.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "common/jsonrpc.h"
#include "report.h"

const struct command_options env_options = {
        .short_options = "m:f:",
        .long_options =
                (const struct option[]){
                        { "mode", required_argument, NULL, 'm' },
                        { "format", required_argument, NULL, 'f' },
                        { "force", no_argument, NULL, 'F' },
                        { "for", required_argument, NULL, 'R' },
                        { "check", no_argument, NULL, 'C' },
                        {},
                },
};

int cmd_env(const struct client_options *o, int argc, char **argv)
{
        enum env_format format = ENV_FORMAT_SH;
        const char *mode = "auto", *framework = NULL;
        bool force = false, check = false, shaped = false;
        struct jsonrpc_response resp;
        json_object *params;
        int c, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, env_options.short_options, env_options.long_options, NULL)) >=
               0) {
                switch (c) {
                case 'm':
                        if (strcmp(optarg, "auto") != 0 && strcmp(optarg, "safe") != 0 &&
                            strcmp(optarg, "dmabuf") != 0) {
                                fprintf(stderr, "sparkc: env: --mode is auto, safe or dmabuf\n");
                                return EXIT_DAEMON_ERROR;
                        }
                        mode = optarg;
                        shaped = true;
                        break;
                case 'R':
                        framework = optarg;
                        shaped = true;
                        break;
                case 'C':
                        check = true;
                        break;
                case 'f':
                        if (env_format_from_string(optarg, &format) < 0) {
                                fprintf(stderr, "sparkc: env: --format is sh, docker or systemd\n");
                                return EXIT_DAEMON_ERROR;
                        }
                        shaped = true;
                        break;
                case 'F':
                        force = true;
                        break;
                default:
                        fprintf(stderr, "usage: sparkc env [--mode auto|safe|dmabuf] [--format "
                                        "sh|docker|systemd] [--force] [--for torchrun|ray|vllm|sglang|mpi]\n"
                                        "       sparkc env --check [--for sparkrun|svd FILE]\n");
                        return EXIT_DAEMON_ERROR;
                }
        }
        if (check && framework && !force && strcmp(mode, "auto") == 0 && format == ENV_FORMAT_SH) {
                if (optind + 1 != argc) {
                        fprintf(stderr, "sparkc: env --check --for %s: name the file to check\n", framework);
                        return ENV_CHECK_EXIT_UNKNOWN;
                }
                return cmd_env_check_file(o, framework, argv[optind]);
        }
        if (check && (shaped || force)) {
                fprintf(stderr,
                        "sparkc: env: --check judges this shell's variables; it takes no other option\n");
                return ENV_CHECK_EXIT_UNKNOWN;
        }
        if (check)
                return cmd_env_check(o);
        params = json_object_new_object();
        json_object_object_add(params, "mode", json_object_new_string(mode));
        if (framework)
                json_object_object_add(params, "for", json_object_new_string(framework));
        r = client_call(o, "env", params, &resp);
        if (r < 0)
                return -r;
        /* A mode that would hang NCCL is printed only when forced; --json shows why as well. */
        if (report_env_refusal(stderr, resp.result, force) < 0 ||
            report_env_for_refusal(stderr, resp.result) < 0) {
                if (o->json)
                        client_print_json(resp.result);
                r = -EXIT_DAEMON_ERROR;
        } else if (o->json) {
                json_object *found;

                client_print_json(resp.result);
                /* The same exit status as the text form: a script must not read "no fabric" as
                 * success. */
                if (!json_object_object_get_ex(resp.result, "fabric_found", &found) ||
                    !json_object_get_boolean(found))
                        r = -EXIT_DAEMON_ERROR;
        } else if (report_env(stdout, stderr, resp.result, format) < 0)
                r = -EXIT_DAEMON_ERROR;
        jsonrpc_response_done(&resp);
        return -r;
}

/* node-problem-detector's custom plugin protocol: exit 0 OK, 1 NonOK, 2 Unknown, and a message of
 * at most 80 bytes (its default max_output_length) on stdout. */
enum { NPD_OK = 0, NPD_NONOK = 1, NPD_UNKNOWN = 2 };
#define NPD_MAX_MESSAGE 80

enum doctor_format {
        DOCTOR_FORMAT_TEXT,
        DOCTOR_FORMAT_LINE,
        DOCTOR_FORMAT_NPD,
};

const struct command_options doctor_options = {
        .short_options = "f:c:n:",
        .long_options =
                (const struct option[]){
                        { "format", required_argument, NULL, 'f' },
                        { "check", required_argument, NULL, 'c' },
                        { "node", required_argument, NULL, 'n' },
                        {},
                },
};

static int doctor_unknown(enum doctor_format format, const char *why)
{
        if (format == DOCTOR_FORMAT_TEXT)
                return DOCTOR_EXIT_UNKNOWN;
        printf("unknown: %s\n", why);
        return format == DOCTOR_FORMAT_NPD ? NPD_UNKNOWN : DOCTOR_EXIT_UNKNOWN;
}

/* One line on stdout; the exit status of the format. A warning is a problem for NPD only where
 * one check was asked for: the probes' degradation that check reports is what its event is for. */
static int doctor_print_line(json_object *result, enum doctor_format format, const char *only)
{
        char line[REPORT_DOCTOR_LINE_SIZE];
        int r;

        r = report_doctor_line(line, format == DOCTOR_FORMAT_NPD ? NPD_MAX_MESSAGE + 1 : sizeof(line),
                               result, only);
        printf("%s\n", line);
        if (format == DOCTOR_FORMAT_LINE)
                return r < 0 ? DOCTOR_EXIT_UNKNOWN : r;
        if (r < 0)
                return NPD_UNKNOWN;
        return r == 2 || (r == 1 && only) ? NPD_NONOK : NPD_OK;
}

int cmd_doctor(const struct client_options *o, int argc, char **argv)
{
        enum doctor_format format = DOCTOR_FORMAT_TEXT;
        const char *only = NULL, *node = NULL;
        struct jsonrpc_response resp;
        char why[256];
        int c, r;

        optind = 1;
        while ((c = getopt_long(argc, argv, doctor_options.short_options, doctor_options.long_options,
                                NULL)) >= 0) {
                switch (c) {
                case 'f':
                        if (strcmp(optarg, "text") == 0)
                                format = DOCTOR_FORMAT_TEXT;
                        else if (strcmp(optarg, "line") == 0)
                                format = DOCTOR_FORMAT_LINE;
                        else if (strcmp(optarg, "npd") == 0)
                                format = DOCTOR_FORMAT_NPD;
                        else {
                                fprintf(stderr,
                                        "sparkc: doctor: --format is text, line or npd, not \"%s\"\n",
                                        optarg);
                                return DOCTOR_EXIT_UNKNOWN;
                        }
                        break;
                case 'c':
                        only = optarg;
                        break;
                case 'n':
                        node = optarg;
                        break;
                default:
                        fprintf(stderr, "usage: sparkc doctor [--format text|line|npd] [--check ID] [--node "
                                        "NAME]\n");
                        return DOCTOR_EXIT_UNKNOWN;
                }
        }
        if (client_no_args("doctor", argc - optind + 1) < 0)
                return DOCTOR_EXIT_UNKNOWN;
        if (only && format == DOCTOR_FORMAT_TEXT) {
                fprintf(stderr, "sparkc: doctor: --check %s needs --format line or npd\n", only);
                return DOCTOR_EXIT_UNKNOWN;
        }
        if (o->json && format != DOCTOR_FORMAT_TEXT) {
                fprintf(stderr,
                        "sparkc: doctor: --json and --format line or npd are two outputs; choose one\n");
                return DOCTOR_EXIT_UNKNOWN;
        }
        if (node && format != DOCTOR_FORMAT_TEXT) {
                fprintf(stderr, "sparkc: doctor: --node shows another node's doctor as text or --json, not "
                                "--format line or npd\n");
                return DOCTOR_EXIT_UNKNOWN;
        }
        if (node)
                return cluster_doctor_of_node(o, node);
        r = client_call(o, "doctor", NULL, &resp);
        if (r == -EXIT_UNREACHABLE) {
                snprintf(why, sizeof(why), "sparkd not reachable at %s", o->socket_path);
                return doctor_unknown(format, why);
        }
        if (r < 0)
                return doctor_unknown(format, "sparkd answered the doctor request with an error");
        if (format != DOCTOR_FORMAT_TEXT) {
                r = doctor_print_line(resp.result, format, only);
        } else if (o->json) {
                json_object *status;

                client_print_json(resp.result);
                r = DOCTOR_EXIT_FAIL;
                if (json_object_object_get_ex(resp.result, "status", &status))
                        r = strcmp(json_object_get_string(status), "ok") == 0     ? DOCTOR_EXIT_OK
                            : strcmp(json_object_get_string(status), "warn") == 0 ? DOCTOR_EXIT_WARN
                                                                                  : DOCTOR_EXIT_FAIL;
        } else {
                r = report_doctor(stdout, resp.result);
        }
        jsonrpc_response_done(&resp);
        return r;
}

/* Appends the strings of array to buf, comma-separated; returns how many. */
static size_t join_strings(json_object *array, char *buf, size_t size)
{
        size_t n =
                array && json_object_is_type(array, json_type_array) ? json_object_array_length(array) : 0;

        for (size_t i = 0; i < n; i++) {
                size_t used = strlen(buf);

                snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
                         json_object_get_string(json_object_array_get_idx(array, i)));
        }
        return n;
}

/* The fabric netdevs without an RDMA device, comma-separated: those named in [fabric] interfaces,
 * which sparkd looks after like the others and NCCL can use only through TCP. */
static void netdevs_without_rdma(json_object *result, char *buf, size_t size)
{
        json_object *netdevs, *devices;

        buf[0] = '\0';
        if (!json_object_object_get_ex(result, "netdevs", &netdevs) ||
            !json_object_is_type(netdevs, json_type_array))
                return;
        for (size_t i = 0; i < json_object_array_length(netdevs); i++) {
                json_object *n = json_object_array_get_idx(netdevs, i);
                size_t used = strlen(buf);

                if (json_object_object_get_ex(n, "rdma_devices", &devices) && devices &&
                    json_object_array_length(devices) > 0)
                        continue;
                snprintf(buf + used, size - used, "%s%s", used ? ", " : "",
                         client_get_string(n, "name", "?"));
        }
}

/* No RDMA device: why (the kernel modules, or no device behind them) and what to do, and the
 * netdevs named in [fabric] interfaces, which sparkd looks after without RDMA. */
static void print_no_rdma(json_object *result)
{
        json_object *host = NULL, *modules = NULL, *missing = NULL;
        char names[512] = "", configured[512] = "";

        printf("no RDMA device found (nothing under /sys/class/infiniband)\n");
        if (json_object_object_get_ex(result, "host", &host) && host &&
            json_object_object_get_ex(host, "rdma_modules", &modules) && modules)
                json_object_object_get_ex(modules, "missing", &missing);
        if (join_strings(missing, names, sizeof(names)))
                printf("why: the RDMA kernel modules %s are not loaded\n"
                       "do:  modprobe mlx5_ib rdma_ucm (ConnectX; install rdma-core for the rest), then "
                       "`ibv_devices` lists the devices and `sparkc fabric` shows them\n",
                       names);
        else
                printf("why: the RDMA kernel modules are loaded, but no device registered: no RDMA NIC, "
                       "or its driver failed to bind\n"
                       "do:  `lspci | grep -i mellanox` shows whether there is a ConnectX; `dmesg | grep "
                       "mlx5` why its driver failed\n");
        netdevs_without_rdma(result, configured, sizeof(configured));
        printf("without RDMA, NCCL falls back to TCP sockets%s%s%s; `sparkc doctor` checks the rest\n",
               configured[0] ? " on the fabric netdevs named in [fabric] interfaces (" : "", configured,
               configured[0] ? ")" : "");
}

static void show_fabric(json_object *result)
{
        json_object *rdma = NULL, *devices = NULL;

        json_object_object_get_ex(result, "rdma", &rdma);
        if (rdma)
                json_object_object_get_ex(rdma, "devices", &devices);
        if (!devices || json_object_array_length(devices) == 0)
                print_no_rdma(result);
        else
                printf("%-16s %-5s %-16s %-8s %-10s %-22s %-9s %-16s %s\n", "DEVICE", "PORT", "NETDEV",
                       "STATE", "PHYS", "RATE", "GID(v2)", "TWIN", "PCIE (MAX)");
        for (size_t i = 0; devices && i < json_object_array_length(devices); i++) {
                json_object *d = json_object_array_get_idx(devices, i), *ports = NULL, *pcie = NULL, *v;
                char link[64] = "-";

                json_object_object_get_ex(d, "ports", &ports);
                /* "32 GT/s x4", and what it could do when it trained lower. */
                if (json_object_object_get_ex(d, "pcie", &pcie) && pcie &&
                    json_object_object_get_ex(pcie, "speed_gts", &v) && v) {
                        double max_gts = 0;

                        snprintf(link, sizeof(link), "%g GT/s x%d", json_object_get_double(v),
                                 client_get_int(pcie, "width"));
                        if (json_object_object_get_ex(pcie, "max_speed_gts", &v) && v)
                                max_gts = json_object_get_double(v);
                        if (client_get_bool(pcie, "degraded"))
                                snprintf(link + strlen(link), sizeof(link) - strlen(link), " (%g GT/s x%d)",
                                         max_gts, client_get_int(pcie, "max_width"));
                }
                for (size_t p = 0; ports && p < json_object_array_length(ports); p++) {
                        json_object *port = json_object_array_get_idx(ports, p), *gid;
                        char gid_s[16] = "-";

                        if (json_object_object_get_ex(port, "roce_v2_ipv4_gid", &gid) && gid)
                                snprintf(gid_s, sizeof(gid_s), "%d", json_object_get_int(gid));
                        printf("%-16s %-5d %-16s %-8s %-10s %-22s %-9s %-16s %s\n",
                               client_get_string(d, "name", "?"), client_get_int(port, "port"),
                               client_get_string(port, "netdev", "-"), client_get_string(port, "state", "?"),
                               client_get_string(port, "phys_state", "?"),
                               client_get_string(port, "rate", "?"), gid_s,
                               client_get_string(d, "twin", "-"), link);
                }
        }
        if (devices && json_object_array_length(devices) > 0) {
                char configured[512];

                netdevs_without_rdma(result, configured, sizeof(configured));
                if (configured[0])
                        printf("named in [fabric] interfaces, without RDMA (NCCL uses them through TCP): "
                               "%s\n",
                               configured);
        }
}

int cmd_fabric(const struct client_options *o, int argc, char **argv)
{
        return client_show(o, argc, argv, show_fabric);
}
