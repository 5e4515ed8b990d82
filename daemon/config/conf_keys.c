/* The config keys: one parser per key, and the table that maps [section] key to it. */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/strutil.h"
#include "conf_internal.h"
#include "daemon/base/log.h"
#include "probe_kinds.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x)  STRINGIFY_(x)

int conf_replace_string(char **dst, const char *value)
{
        char *copy = strdup(value);

        if (!copy)
                return -ENOMEM;
        free(*dst);
        *dst = copy;
        return 0;
}

static int parse_node_name(struct conf_parse *p, const char *value, const char **why)
{
        size_t len = strlen(value);

        *why = "a node name of 1 to 63 letters, digits, '-', '_' or '.'";
        if (len == 0 || len > 63)
                return -EINVAL;
        for (const char *c = value; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                      strchr("-_.", *c)))
                        return -EINVAL;
        return conf_replace_string(&p->config->node_name, value);
}

static int parse_mode(struct conf_parse *p, const char *value, const char **why)
{
        *why = "\"enforce\" or \"audit\"";
        if (strcmp(value, "enforce") == 0)
                p->config->mode = ENFORCE_MODE_ENFORCE;
        else if (strcmp(value, "audit") == 0)
                p->config->mode = ENFORCE_MODE_AUDIT;
        else
                return -EINVAL;
        return 0;
}

static int parse_absolute_path(const char *value, size_t max, const char **why)
{
        *why = "an absolute path";
        if (value[0] != '/')
                return -EINVAL;
        if (strlen(value) >= max) {
                *why = "a shorter path";
                return -ENAMETOOLONG;
        }
        return 0;
}

static int parse_state_dir(struct conf_parse *p, const char *value, const char **why)
{
        int r = parse_absolute_path(value, PATH_MAX, why);

        return r < 0 ? r : conf_replace_string(&p->config->state_dir, value);
}

static int parse_socket_path(struct conf_parse *p, const char *value, const char **why)
{
        int r = parse_absolute_path(value, sizeof(((struct sockaddr_un *)0)->sun_path), why);

        return r < 0 ? r : conf_replace_string(&p->config->socket_path, value);
}

static int parse_log_level(struct conf_parse *p, const char *value, const char **why)
{
        *why = "one of debug, info, notice, warning, err";
        return log_level_from_string(value, &p->config->log_level);
}

static int parse_socket_mode(struct conf_parse *p, const char *value, const char **why)
{
        uint64_t mode;
        int r;

        *why = "an octal file mode such as 0660";
        r = parse_uint64(value, 8, 0, 0777, &mode);
        if (r < 0)
                return r;
        p->config->socket_mode = (mode_t)mode;
        return 0;
}

static int parse_group(const char *value, char **name, gid_t *gid, const char **why)
{
        struct group *gr;

        if (!*value) {
                free(*name);
                *name = NULL;
                return 0;
        }
        /* Resolved while loading, so a typo is a config error and not a surprise at runtime. */
        errno = 0;
        gr = getgrnam(value);
        if (!gr) {
                *why = "the name of an existing group";
                return errno ? -errno : -ENOENT;
        }
        *gid = gr->gr_gid;
        return conf_replace_string(name, value);
}

static int parse_socket_group(struct conf_parse *p, const char *value, const char **why)
{
        p->socket_group_set = true;
        return parse_group(value, &p->config->socket_group, &p->config->socket_gid, why);
}

static int parse_admin_group(struct conf_parse *p, const char *value, const char **why)
{
        p->admin_group_set = true;
        return parse_group(value, &p->config->admin_group, &p->config->admin_gid, why);
}

static int parse_max_clients(struct conf_parse *p, const char *value, const char **why)
{
        uint64_t n;
        int r;

        *why = "a number from 1 to 65536";
        r = parse_uint64(value, 10, 1, 65536, &n);
        if (r < 0)
                return r;
        p->config->max_clients = (unsigned)n;
        return 0;
}

static int parse_usec_range(const char *value, uint64_t min, uint64_t max, uint64_t *out)
{
        uint64_t usec;
        int r = parse_duration_usec(value, &usec);

        if (r < 0)
                return r;
        if (usec < min || usec > max)
                return -ERANGE;
        *out = usec;
        return 0;
}

static int parse_recheck_interval(struct conf_parse *p, const char *value, const char **why)
{
        *why = "a duration from 1s to 1h, such as 30s or 5m";
        return parse_usec_range(value, 1000000ULL, 3600000000ULL, &p->config->recheck_usec);
}

int conf_set_host_root(struct sparkd_config *c, const char *root)
{
        /* "/" + "sys" is "/sys", not "//sys". */
        const char *sep = root[strlen(root) - 1] == '/' ? "" : "/";

        free(c->host_root);
        free(c->sysfs_root);
        free(c->procfs_root);
        free(c->etc_root);
        c->sysfs_root = c->procfs_root = c->etc_root = NULL;
        c->host_root = strdup(root);
        if (!c->host_root || asprintf(&c->sysfs_root, "%s%ssys", root, sep) < 0 ||
            asprintf(&c->procfs_root, "%s%sproc", root, sep) < 0 ||
            asprintf(&c->etc_root, "%s%setc", root, sep) < 0)
                return -ENOMEM;
        return 0;
}

static int parse_host_root(struct conf_parse *p, const char *value, const char **why)
{
        int r = parse_absolute_path(value, PATH_MAX - 64, why);

        return r < 0 ? r : conf_set_host_root(p->config, value);
}

static bool is_interface_name(const char *s, bool allow_glob)
{
        size_t len = strlen(s);

        if (len == 0 || len >= IF_NAMESIZE)
                return false;
        for (; *s; s++)
                if (*s == '/' || *s == ':' || isspace((unsigned char)*s) ||
                    (!allow_glob && strchr("*?[]", *s)))
                        return false;
        return true;
}

/* Names of interfaces that do not exist are allowed (a NIC may appear later) but said. */
static void warn_missing_interfaces(struct conf_parse *p, const char *key, char *const *names)
{
        for (char *const *n = names; n && *n; n++) {
                char path[PATH_MAX];

                if (strpbrk(*n, "*?["))
                        continue;
                snprintf(path, sizeof(path), "%s/class/net/%s", p->config->sysfs_root, *n);
                if (access(path, F_OK) < 0)
                        conf_add_warning(
                                p->errors, p->file, p->line,
                                "%s: interface \"%s\" does not exist (now); it is managed once it appears",
                                key, *n);
        }
}

static int parse_interface_list(struct conf_parse *p, const char *key, const char *value, bool allow_glob,
                                char ***out, const char **why)
{
        char **names = NULL;
        int r = strv_split(value, &names);

        if (r < 0)
                return r;
        *why = allow_glob ? "interface names or shell globs (such as enp1s0f1np1 or enP2p*), separated by "
                            "spaces"
                          : "interface names separated by spaces";
        for (char **n = names; *n; n++) {
                if (!is_interface_name(*n, allow_glob)) {
                        strv_free(names);
                        return -EINVAL;
                }
        }
        warn_missing_interfaces(p, key, names);
        strv_free(*out);
        *out = names;
        return 0;
}

static int parse_fabric_interfaces(struct conf_parse *p, const char *value, const char **why)
{
        return parse_interface_list(p, "interfaces", value, true, &p->config->fabric_patterns, why);
}

static int parse_fabric_down(struct conf_parse *p, const char *value, const char **why)
{
        return parse_interface_list(p, "down", value, false, &p->config->fabric_down, why);
}

static int parse_fabric_mtu(struct conf_parse *p, const char *value, const char **why)
{
        uint64_t mtu;
        int r;

        *why = "an MTU from " STRINGIFY(CONF_MTU_MIN) " to " STRINGIFY(CONF_MTU_MAX);
        r = parse_uint64(value, 10, CONF_MTU_MIN, CONF_MTU_MAX, &mtu);
        if (r < 0)
                return r;
        p->config->fabric_mtu = (unsigned)mtu;
        return 0;
}

static int parse_flap_threshold(struct conf_parse *p, const char *value, const char **why)
{
        uint64_t n;
        int r;

        *why = "a number of link changes from 2 to 1000";
        r = parse_uint64(value, 10, 2, 1000, &n);
        if (r < 0)
                return r;
        p->config->flap_threshold = (unsigned)n;
        return 0;
}

static int parse_flap_window(struct conf_parse *p, const char *value, const char **why)
{
        *why = "a duration from 1s to 1h, such as 60s";
        return parse_usec_range(value, 1000000ULL, 3600000000ULL, &p->config->flap_window_usec);
}

static int parse_peer_port(struct conf_parse *p, const char *value, const char **why)
{
        uint64_t port;
        int r;

        *why = "a TCP port from 1 to 65535";
        r = parse_uint64(value, 10, 1, 65535, &port);
        if (r < 0)
                return r;
        p->config->peer_port = (uint16_t)port;
        return 0;
}

static int parse_key_file(struct conf_parse *p, const char *value, const char **why)
{
        int r = parse_absolute_path(value, PATH_MAX, why);

        return r < 0 ? r : conf_replace_string(&p->config->key_file, value);
}

static int parse_static_peers(struct conf_parse *p, const char *value, const char **why)
{
        char **peers = NULL;
        int r = strv_split(value, &peers);

        if (r < 0)
                return r;
        *why = "IPv4 addresses or host names separated by spaces";
        for (char **s = peers; *s; s++) {
                if (strlen(*s) > 253 ||
                    strspn(*s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") !=
                            strlen(*s)) {
                        strv_free(peers);
                        return -EINVAL;
                }
        }
        strv_free(p->config->static_peers);
        p->config->static_peers = peers;
        return 0;
}

static int parse_mdns(struct conf_parse *p, const char *value, const char **why)
{
        *why = "yes or no";
        return parse_bool(value, &p->config->mdns);
}

static int parse_heartbeat(struct conf_parse *p, const char *value, const char **why)
{
        *why = "a duration from 100ms to 60s";
        return parse_usec_range(value, 100000ULL, 60000000ULL, &p->config->heartbeat_usec);
}

static int parse_peer_timeout(struct conf_parse *p, const char *value, const char **why)
{
        *why = "a duration from 1s to 10m";
        return parse_usec_range(value, 1000000ULL, 600000000ULL, &p->config->peer_timeout_usec);
}

static int parse_helper_dir(struct conf_parse *p, const char *value, const char **why)
{
        int r = parse_absolute_path(value, PATH_MAX - 64, why);

        return r < 0 ? r : conf_replace_string(&p->config->probe_helper_dir, value);
}

static int parse_history_size(struct conf_parse *p, const char *value, const char **why)
{
        uint64_t n;
        int r;

        *why = "a number of results from 10 to 100000";
        r = parse_uint64(value, 10, 10, 100000, &n);
        if (r >= 0)
                p->config->probe_history_size = (unsigned)n;
        return r;
}

static int parse_expect_gbps(struct conf_parse *p, const char *value, const char **why)
{
        *why = "Gb/s from 0 (learn from the first results) to 10000";
        return parse_double(value, 0, 10000, &p->config->probe_expect_tcp_gbps);
}

static int parse_expect_rdma(struct conf_parse *p, const char *value, const char **why)
{
        *why = "Gb/s from 0 (the port's payload rate, or learn from the first results) to 10000";
        return parse_double(value, 0, 10000, &p->config->probe_expect_rdma_gbps);
}

static int parse_expect_rtt(struct conf_parse *p, const char *value, const char **why)
{
        *why = "microseconds from 0 (learn from the first results) to 10000000";
        return parse_double(value, 0, 10000000, &p->config->probe_expect_rtt_us);
}

static int parse_expect_nccl(struct conf_parse *p, const char *value, const char **why)
{
        *why = "GB/s of bus bandwidth from 0 (learn from the first results) to 10000";
        return parse_double(value, 0, 10000, &p->config->probe_expect_nccl_busbw);
}

static int parse_healthy_gbps(struct conf_parse *p, const char *value, const char **why)
{
        *why = "Gb/s per rail from 0.001 to 10000";
        return parse_double(value, 0.001, 10000, &p->config->diagnosis_healthy_gbps);
}

static int parse_stale_min_gbps(struct conf_parse *p, const char *value, const char **why)
{
        *why = "Gb/s per rail from 0 to 10000";
        return parse_double(value, 0, 10000, &p->config->diagnosis_stale_min_gbps);
}

static int parse_stale_max_gbps(struct conf_parse *p, const char *value, const char **why)
{
        *why = "Gb/s per rail from 0.001 to 10000";
        return parse_double(value, 0.001, 10000, &p->config->diagnosis_stale_max_gbps);
}

static int parse_degraded_ratio(struct conf_parse *p, const char *value, const char **why)
{
        *why = "a fraction of the expected value from 0.05 to 1";
        return parse_double(value, 0.05, 1, &p->config->probe_degraded_ratio);
}

static int parse_probe_interval(struct conf_parse *p, const char *value, const char **why)
{
        *why = "0 (off) or a duration from 10s to 7d";
        if (strcmp(value, "0") == 0) {
                p->config->probe_interval_usec = 0;
                return 0;
        }
        return parse_usec_range(value, 10000000ULL, 604800000000ULL, &p->config->probe_interval_usec);
}

static int parse_probe_jitter(struct conf_parse *p, const char *value, const char **why)
{
        *why = "a duration from 0 to 1h";
        if (strcmp(value, "0") == 0) {
                p->config->probe_jitter_usec = 0;
                return 0;
        }
        return parse_usec_range(value, 1, 3600000000ULL, &p->config->probe_jitter_usec);
}

static int parse_rtt_interval(struct conf_parse *p, const char *value, const char **why)
{
        *why = "0 (off) or a duration from 1s to 7d";
        if (strcmp(value, "0") == 0) {
                p->config->probe_rtt_interval_usec = 0;
                return 0;
        }
        return parse_usec_range(value, 1000000ULL, 604800000000ULL, &p->config->probe_rtt_interval_usec);
}

static int parse_probe_duration(struct conf_parse *p, const char *value, const char **why)
{
        uint64_t n;
        int r;

        *why = "seconds from 1 to 600";
        r = parse_uint64(value, 10, 1, 600, &n);
        if (r >= 0)
                p->config->probe_duration_sec = (unsigned)n;
        return r;
}

static int parse_memory_margin(struct conf_parse *p, const char *value, const char **why)
{
        *why = "a size from 0 to 1024G (K, M, G suffixes)";
        return parse_size(value, 0, 1024ULL << 30, &p->config->probe_memory_margin);
}

static int parse_probe_kinds(struct conf_parse *p, const char *value, const char **why)
{
        static char what[224];
        char **kinds = NULL, names[96];
        int r = strv_split(value, &kinds);

        if (r < 0)
                return r;
        probe_kind_names(names, sizeof(names));
        /* Static: *why outlives this call. The list is the table's, so it changes only between builds. */
        snprintf(what, sizeof(what),
                 "bandwidth probe kinds separated by spaces, of those this sparkd has (%s), "
                 "each once; rtt has its own rtt_interval",
                 names);
        *why = what;
        for (char **k = kinds; *k; k++) {
                const struct probe_kind *kind = probe_kind_find(*k);

                if (!kind || !kind->is_bandwidth || strv_contains(k + 1, *k)) {
                        strv_free(kinds);
                        return -EINVAL;
                }
        }
        strv_free(p->config->probe_kinds);
        p->config->probe_kinds = kinds;
        return 0;
}

static int parse_probe_streams(struct conf_parse *p, const char *value, const char **why)
{
        uint64_t n;
        int r;

        *why = "a number of TCP streams from 1 to 64";
        r = parse_uint64(value, 10, 1, 64, &n);
        if (r >= 0)
                p->config->probe_streams = (unsigned)n;
        return r;
}

static int parse_textfile(struct conf_parse *p, const char *value, const char **why)
{
        int r;

        if (!*value) {
                free(p->config->metrics_textfile);
                p->config->metrics_textfile = NULL;
                return 0;
        }
        r = parse_absolute_path(value, PATH_MAX - 8, why);
        if (r < 0)
                return r;
        *why = "a path ending in .prom (node_exporter's textfile collector reads only those)";
        if (strlen(value) < 6 || strcmp(value + strlen(value) - 5, ".prom") != 0)
                return -EINVAL;
        return conf_replace_string(&p->config->metrics_textfile, value);
}

/* clang-format off */
const struct conf_key conf_keys[] = {
        { "daemon", "node_name",        parse_node_name },
        { "daemon", "mode",             parse_mode },
        { "daemon", "state_dir",        parse_state_dir },
        { "daemon", "log_level",        parse_log_level },
        { "daemon", "recheck_interval", parse_recheck_interval },
        { "daemon", "host_root",        parse_host_root },
        { "fabric", "interfaces",       parse_fabric_interfaces },
        { "fabric", "down",             parse_fabric_down },
        { "fabric", "mtu",              parse_fabric_mtu },
        { "fabric", "flap_threshold",   parse_flap_threshold },
        { "fabric", "flap_window",      parse_flap_window },
        { "peers",  "port",             parse_peer_port },
        { "peers",  "key_file",         parse_key_file },
        { "peers",  "static",           parse_static_peers },
        { "peers",  "mdns",             parse_mdns },
        { "peers",  "heartbeat_interval", parse_heartbeat },
        { "peers",  "timeout",          parse_peer_timeout },
        { "probe",  "helper_dir",       parse_helper_dir },
        { "probe",  "history_size",     parse_history_size },
        { "probe",  "expect_tcp_gbps",  parse_expect_gbps },
        { "probe",  "expect_rtt_us",    parse_expect_rtt },
        { "probe",  "expect_nccl_busbw", parse_expect_nccl },
        { "probe",  "expect_rdma_gbps", parse_expect_rdma },
        { "probe",  "degraded_ratio",   parse_degraded_ratio },
        { "probe",  "interval",         parse_probe_interval },
        { "probe",  "jitter",           parse_probe_jitter },
        { "probe",  "rtt_interval",     parse_rtt_interval },
        { "probe",  "duration",         parse_probe_duration },
        { "probe",  "streams",          parse_probe_streams },
        { "probe",  "kinds",            parse_probe_kinds },
        { "probe",  "memory_margin",    parse_memory_margin },
        { "diagnosis", "healthy_gbps",  parse_healthy_gbps },
        { "diagnosis", "stale_min_gbps", parse_stale_min_gbps },
        { "diagnosis", "stale_max_gbps", parse_stale_max_gbps },
        { "metrics", "textfile",        parse_textfile },
        { "api",    "socket",           parse_socket_path },
        { "api",    "socket_mode",      parse_socket_mode },
        { "api",    "socket_group",     parse_socket_group },
        { "api",    "admin_group",      parse_admin_group },
        { "api",    "max_clients",      parse_max_clients },
};
/* clang-format on */

const size_t conf_n_keys = ARRAY_SIZE(conf_keys);
