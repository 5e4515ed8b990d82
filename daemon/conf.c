#include "conf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <ini.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "macro.h"
#include "strutil.h"

#define CONF_MAX_LINE      4096
#define STRINGIFY_(x)      #x
#define STRINGIFY(x)       STRINGIFY_(x)
#define DEFAULT_SOCKET_GRP "sparkd"
#define DEFAULT_ADMIN_GRP  "sparkd-admin"

struct conf_parse {
        struct sparkd_config *config;
        struct conf_errors *errors;
        const char *file;
        FILE *stream;
        unsigned line; /* line the reader handed to inih last */
        char *buf;
        size_t buf_size;
        bool socket_group_set; /* the user named a group: a missing one is then an error */
        bool admin_group_set;
};

struct conf_key {
        const char *section;
        const char *name;
        /* Returns 0, or a negative errno with *why set to what was expected. */
        int (*parse)(struct conf_parse *p, const char *value, const char **why);
};

static int add_entry(struct conf_errors *errors, bool is_warning, const char *file, unsigned line,
                     const char *fmt, va_list ap)
{
        struct conf_error *v;
        char *message;

        if (vasprintf(&message, fmt, ap) < 0)
                return -ENOMEM;
        v = realloc(errors->v, (errors->n + 1) * sizeof(*v));
        if (!v) {
                free(message);
                return -ENOMEM;
        }
        errors->v = v;
        v[errors->n++] = (struct conf_error){ .file = file ? strdup(file) : NULL,
                                              .line = line,
                                              .message = message,
                                              .is_warning = is_warning };
        return 0;
}

static int add_error(struct conf_errors *errors, const char *file, unsigned line, const char *fmt, ...)
        _printf_(4, 5);
static int add_error(struct conf_errors *errors, const char *file, unsigned line, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = add_entry(errors, false, file, line, fmt, ap);
        va_end(ap);
        return r;
}

static int add_warning(struct conf_errors *errors, const char *file, unsigned line, const char *fmt, ...)
        _printf_(4, 5);
static int add_warning(struct conf_errors *errors, const char *file, unsigned line, const char *fmt, ...)
{
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = add_entry(errors, true, file, line, fmt, ap);
        va_end(ap);
        return r;
}

static int replace_string(char **dst, const char *value)
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
        return replace_string(&p->config->node_name, value);
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

        return r < 0 ? r : replace_string(&p->config->state_dir, value);
}

static int parse_socket_path(struct conf_parse *p, const char *value, const char **why)
{
        int r = parse_absolute_path(value, sizeof(((struct sockaddr_un *)0)->sun_path), why);

        return r < 0 ? r : replace_string(&p->config->socket_path, value);
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
        return replace_string(name, value);
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

static int conf_set_host_root(struct sparkd_config *c, const char *root)
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
                        add_warning(
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

        return r < 0 ? r : replace_string(&p->config->key_file, value);
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

        return r < 0 ? r : replace_string(&p->config->probe_helper_dir, value);
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

static int parse_expect_rtt(struct conf_parse *p, const char *value, const char **why)
{
        *why = "microseconds from 0 (learn from the first results) to 10000000";
        return parse_double(value, 0, 10000000, &p->config->probe_expect_rtt_us);
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
        return replace_string(&p->config->metrics_textfile, value);
}

/* clang-format off */
static const struct conf_key conf_keys[] = {
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
        { "probe",  "degraded_ratio",   parse_degraded_ratio },
        { "probe",  "interval",         parse_probe_interval },
        { "probe",  "jitter",           parse_probe_jitter },
        { "probe",  "rtt_interval",     parse_rtt_interval },
        { "probe",  "duration",         parse_probe_duration },
        { "probe",  "streams",          parse_probe_streams },
        { "metrics", "textfile",        parse_textfile },
        { "api",    "socket",           parse_socket_path },
        { "api",    "socket_mode",      parse_socket_mode },
        { "api",    "socket_group",     parse_socket_group },
        { "api",    "admin_group",      parse_admin_group },
        { "api",    "max_clients",      parse_max_clients },
};
/* clang-format on */

static int conf_set_sysctl(struct sparkd_config *c, const char *name, const char *value)
{
        struct conf_sysctl *v;
        char *copy = NULL;

        if (*value && !(copy = strdup(value)))
                return -ENOMEM;
        for (size_t i = 0; i < c->n_sysctls; i++) {
                if (strcmp(c->sysctls[i].name, name) == 0) {
                        free(c->sysctls[i].value);
                        c->sysctls[i].value = copy;
                        return 0;
                }
        }
        v = realloc(c->sysctls, (c->n_sysctls + 1) * sizeof(*v));
        if (!v) {
                free(copy);
                return -ENOMEM;
        }
        c->sysctls = v;
        v[c->n_sysctls].name = strdup(name);
        v[c->n_sysctls].value = copy;
        if (!v[c->n_sysctls].name) {
                free(copy);
                return -ENOMEM;
        }
        c->n_sysctls++;
        return 0;
}

/* [sysctl] keys are sysctl names; only ones this kernel has are accepted, so a typo is caught
 * by --check-config and not discovered as a write failure later. */
static int conf_handle_sysctl(struct conf_parse *p, const char *name, const char *value)
{
        char path[PATH_MAX];
        struct stat st;
        size_t n;

        n = (size_t)snprintf(path, sizeof(path), "/proc/sys/%s", name);
        if (n >= sizeof(path) || !*name || strstr(name, "..") || strchr(name, '/')) {
                add_error(p->errors, p->file, p->line,
                          "\"%s\" is not a sysctl name (such as net.core.rmem_max)", name);
                return 0;
        }
        for (char *c = path + strlen("/proc/sys/"); *c; c++)
                if (*c == '.')
                        *c = '/';
        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
                add_error(p->errors, p->file, p->line, "unknown sysctl \"%s\" (no %s)", name, path);
                return 0;
        }
        if (strchr(value, '\n')) {
                add_error(p->errors, p->file, p->line, "%s: a value on one line", name);
                return 0;
        }
        return conf_set_sysctl(p->config, name, value) < 0 ? 0 : 1;
}

static bool section_exists(const char *section)
{
        for (size_t i = 0; i < ARRAY_SIZE(conf_keys); i++)
                if (strcmp(conf_keys[i].section, section) == 0)
                        return true;
        return false;
}

static int conf_handler(void *userdata, const char *section, const char *name, const char *value)
{
        struct conf_parse *p = userdata;
        const char *why = NULL;
        int r;

        if (!*section) {
                add_error(p->errors, p->file, p->line, "\"%s\" is outside any [section]", name);
                return 0;
        }
        if (strcmp(section, "sysctl") == 0)
                return conf_handle_sysctl(p, name, value);
        if (!section_exists(section)) {
                add_error(p->errors, p->file, p->line, "unknown section [%s]", section);
                return 0;
        }
        for (size_t i = 0; i < ARRAY_SIZE(conf_keys); i++) {
                if (strcmp(conf_keys[i].section, section) != 0 || strcmp(conf_keys[i].name, name) != 0)
                        continue;
                r = conf_keys[i].parse(p, value, &why);
                if (r == -ENOMEM)
                        return 0;
                if (r < 0) {
                        add_error(p->errors, p->file, p->line, "%s=\"%s\": expected %s", name, value,
                                  why ? why : "a valid value");
                        return 0;
                }
                return 1;
        }
        add_error(p->errors, p->file, p->line, "unknown key \"%s\" in [%s]", name, section);
        return 0;
}

/* inih reads through this so that the handler knows which line it is looking at, and so that an
 * overlong line is reported instead of being split into two. */
static char *conf_reader(char *str, int num, void *userdata)
{
        struct conf_parse *p = userdata;
        ssize_t n = getline(&p->buf, &p->buf_size, p->stream);

        if (n < 0)
                return NULL;
        p->line++;
        if (n >= num || n >= CONF_MAX_LINE) {
                add_error(p->errors, p->file, p->line, "line longer than %d bytes", CONF_MAX_LINE - 2);
                snprintf(str, (size_t)num, "\n");
                return str;
        }
        memcpy(str, p->buf, (size_t)n + 1);
        return str;
}

static int conf_parse_file(struct conf_parse *p, const char *file)
{
        _cleanup_fclose_ FILE *f = fopen(file, "re");
        size_t errors_before = p->errors->n;
        int line;

        if (!f)
                return -errno;
        p->file = file;
        p->stream = f;
        p->line = 0;
        line = ini_parse_stream(conf_reader, p, conf_handler, p);
        if (line == -2)
                return -ENOMEM;
        /* inih reports only the first bad line; when our handler did not flag that line itself,
         * the line is not INI syntax. */
        if (line > 0) {
                bool known = false;

                for (size_t i = errors_before; i < p->errors->n; i++)
                        if (p->errors->v[i].line == (unsigned)line &&
                            strcmp(p->errors->v[i].file, file) == 0)
                                known = true;
                if (!known)
                        add_error(p->errors, file, (unsigned)line,
                                  "expected \"[section]\" or \"key = value\"");
        }
        if (ferror(f))
                return -EIO;
        return 0;
}

static int dropin_filter(const struct dirent *de)
{
        size_t len = strlen(de->d_name);

        return de->d_name[0] != '.' && len > 5 && strcmp(de->d_name + len - 5, ".conf") == 0;
}

static int dropin_compare(const struct dirent **a, const struct dirent **b)
{
        /* Byte order, not the locale's: the same files apply in the same order everywhere. */
        return strcmp((*a)->d_name, (*b)->d_name);
}

static int conf_parse_dropins(struct conf_parse *p, const char *main_path)
{
        _cleanup_free_ char *dir = NULL;
        struct dirent **names = NULL;
        int n, r = 0;

        if (asprintf(&dir, "%s.d", main_path) < 0)
                return -ENOMEM;
        n = scandir(dir, &names, dropin_filter, dropin_compare);
        if (n < 0)
                return errno == ENOENT || errno == ENOTDIR ? 0
                                                           : add_error(p->errors, dir, 0, "cannot read: %m");
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *file = NULL;
                struct stat st;

                if (r == 0 && asprintf(&file, "%s/%s", dir, names[i]->d_name) < 0)
                        r = -ENOMEM;
                if (r == 0 && stat(file, &st) == 0 && S_ISREG(st.st_mode)) {
                        int q = conf_parse_file(p, file);

                        if (q < 0)
                                add_error(p->errors, file, 0, "cannot read: %s", strerror(-q));
                        else
                                r = strv_push(&p->config->files_read, file);
                }
                free(names[i]);
        }
        free(names);
        return r;
}

static int conf_set_defaults(struct sparkd_config *c, const char *path)
{
        char host[HOST_NAME_MAX + 1] = "localhost";
        char *dot;

        if (gethostname(host, sizeof(host) - 1) < 0 || !*host)
                strcpy(host, "localhost");
        dot = strchr(host, '.');
        if (dot)
                *dot = '\0';

        c->path = strdup(path);
        c->node_name = strdup(host);
        c->state_dir = strdup(SPARKD_STATE_DIR);
        c->socket_path = strdup(SPARKD_SOCKET_PATH);
        c->socket_group = strdup(DEFAULT_SOCKET_GRP);
        c->admin_group = strdup(DEFAULT_ADMIN_GRP);
        c->mode = ENFORCE_MODE_ENFORCE;
        c->log_level = LOG_INFO;
        c->socket_mode = 0660;
        c->max_clients = 256;
        c->recheck_usec = 30 * 1000000ULL;
        if (conf_set_host_root(c, "/") < 0)
                return -ENOMEM;
        c->fabric_mtu = 9000;
        c->peer_port = 7471;
        c->probe_helper_dir = strdup(SPARKD_HELPER_DIR);
        c->probe_history_size = 1000;
        c->probe_degraded_ratio = 0.8;
        c->probe_interval_usec = 3600 * 1000000ULL;
        c->probe_jitter_usec = 300 * 1000000ULL;
        c->probe_rtt_interval_usec = 300 * 1000000ULL;
        c->probe_duration_sec = 5;
        c->probe_streams = 4;
        if (!c->probe_helper_dir)
                return -ENOMEM;
        c->key_file = strdup(SPARKD_KEY_PATH);
        c->mdns = true;
        c->heartbeat_usec = 2 * 1000000ULL;
        c->peer_timeout_usec = 6 * 1000000ULL;
        if (!c->key_file)
                return -ENOMEM;
        c->flap_threshold = 3;
        c->flap_window_usec = 60 * 1000000ULL;
        /* Seed 002's socket buffer sizes: NCCL's socket transport and TCP probes need them. */
        if (conf_set_sysctl(c, "net.core.rmem_max", "268435456") < 0 ||
            conf_set_sysctl(c, "net.core.wmem_max", "268435456") < 0)
                return -ENOMEM;
        if (!c->path || !c->node_name || !c->state_dir || !c->socket_path || !c->socket_group ||
            !c->admin_group)
                return -ENOMEM;
        return 0;
}

/* The default groups are a convenience of the packaged install; on a host without them the
 * daemon still runs, with root-only admin access and the socket's group left alone. */
static void conf_resolve_default_group(char **name, gid_t *gid)
{
        struct group *gr;

        if (!*name)
                return;
        gr = getgrnam(*name);
        if (gr) {
                *gid = gr->gr_gid;
                return;
        }
        free(*name);
        *name = NULL;
}

int conf_load(const char *path, bool must_exist, struct sparkd_config **ret, struct conf_errors *errors)
{
        struct sparkd_config *c = calloc(1, sizeof(*c));
        struct conf_parse p = { .config = c, .errors = errors };
        int r;

        *errors = (struct conf_errors){ 0 };
        if (!c)
                return -ENOMEM;

        /* The runtime knobs of Debian's inih: one key per line, no continuation lines. */
        ini_allow_multiline = false;
        ini_use_stack = false;
        ini_allow_realloc = false;
        ini_max_line = CONF_MAX_LINE;

        r = conf_set_defaults(c, path);
        if (r < 0)
                goto fail;

        r = conf_parse_file(&p, path);
        if (r == -ENOENT && !must_exist) {
                c->path_found = false;
                r = 0;
        } else if (r < 0) {
                add_error(errors, path, 0, "cannot read: %s", strerror(-r));
        } else {
                c->path_found = true;
                r = strv_push(&c->files_read, path);
        }
        if (r >= 0)
                r = conf_parse_dropins(&p, path);
        free(p.buf);
        if (r < 0)
                goto fail;

        if (!p.socket_group_set)
                conf_resolve_default_group(&c->socket_group, &c->socket_gid);
        if (!p.admin_group_set)
                conf_resolve_default_group(&c->admin_group, &c->admin_gid);

        if (conf_errors_has_error(errors)) {
                conf_free(c);
                return -EINVAL;
        }
        *ret = c;
        return 0;

fail:
        conf_free(c);
        if (r == -ENOMEM)
                add_error(errors, NULL, 0, "out of memory");
        return r;
}

void conf_free(struct sparkd_config *c)
{
        if (!c)
                return;
        strv_free(c->files_read);
        strv_free(c->fabric_patterns);
        strv_free(c->fabric_down);
        for (size_t i = 0; i < c->n_sysctls; i++) {
                free(c->sysctls[i].name);
                free(c->sysctls[i].value);
        }
        free(c->sysctls);
        free(c->host_root);
        free(c->sysfs_root);
        free(c->procfs_root);
        free(c->etc_root);
        free(c->key_file);
        free(c->probe_helper_dir);
        free(c->metrics_textfile);
        strv_free(c->static_peers);
        free(c->path);
        free(c->node_name);
        free(c->state_dir);
        free(c->socket_path);
        free(c->socket_group);
        free(c->admin_group);
        free(c);
}

void conf_errors_clear(struct conf_errors *errors)
{
        for (size_t i = 0; i < errors->n; i++) {
                free(errors->v[i].file);
                free(errors->v[i].message);
        }
        free(errors->v);
        *errors = (struct conf_errors){ 0 };
}

bool conf_errors_has_error(const struct conf_errors *errors)
{
        for (size_t i = 0; i < errors->n; i++)
                if (!errors->v[i].is_warning)
                        return true;
        return false;
}

char *conf_error_format(const struct conf_error *e)
{
        const char *kind = e->is_warning ? "warning: " : "";
        char *s = NULL;
        int r;

        if (e->file && e->line)
                r = asprintf(&s, "%s:%u: %s%s", e->file, e->line, kind, e->message);
        else if (e->file)
                r = asprintf(&s, "%s: %s%s", e->file, kind, e->message);
        else
                r = asprintf(&s, "%s%s", kind, e->message);
        return r < 0 ? NULL : s;
}

const char *enforce_mode_to_string(enum enforce_mode mode)
{
        return mode == ENFORCE_MODE_AUDIT ? "audit" : "enforce";
}
