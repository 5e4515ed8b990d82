#include "conf_keys.h"

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <net/if.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/launcher_export.h"
#include "common/strutil.h"
#include "conf_lists.h"
#include "daemon/base/log.h"

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

static int check_node_name(const char *value, const char **why)
{
        size_t len = strlen(value);

        *why = "a node name of 1 to 63 letters, digits, '-', '_' or '.'";
        if (len == 0 || len > 63)
                return -EINVAL;
        for (const char *c = value; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                      strchr("-_.", *c)))
                        return -EINVAL;
        return 0;
}

static int parse_node_name(struct conf_parse *p, const char *value, const char **why)
{
        int r = check_node_name(value, why);

        return r < 0 ? r : conf_replace_string(&p->config->node_name, value);
}

/* [cluster] head: a node name; empty for none (the first healthy node by name). */
static int parse_cluster_head(struct conf_parse *p, const char *value, const char **why)
{
        int r;

        if (!value[0]) {
                free(p->config->cluster_head);
                p->config->cluster_head = NULL;
                return 0;
        }
        r = check_node_name(value, why);
        return r < 0 ? r : conf_replace_string(&p->config->cluster_head, value);
}

/* [fabric] ring_merge_nics: 0 or 1 for NCCL_IB_MERGE_NICS on rings and meshes, auto (-1) to leave
 * it to NCCL. */
static int parse_ring_merge_nics(struct conf_parse *p, const char *value, const char **why)
{
        *why = "auto, 0 or 1";
        if (strcmp(value, "auto") == 0)
                p->config->ring_merge_nics = -1;
        else if (strcmp(value, "0") == 0 || strcmp(value, "1") == 0)
                p->config->ring_merge_nics = value[0] - '0';
        else
                return -EINVAL;
        return 0;
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

static int parse_key_file(struct conf_parse *p, const char *value, const char **why)
{
        int r = parse_absolute_path(value, PATH_MAX, why);

        return r < 0 ? r : conf_replace_string(&p->config->key_file, value);
}

static int parse_lldpd_socket(struct conf_parse *p, const char *value, const char **why)
{
        int r = parse_absolute_path(value, sizeof(((struct sockaddr_un *)0)->sun_path), why);

        return r < 0 ? r : conf_replace_string(&p->config->lldpd_socket, value);
}

/* The shapes topology.h derives that a site may expect; the topology engine sits above the
 * config, so the list is said here too. */
static int parse_cluster_topology(struct conf_parse *p, const char *value, const char **why)
{
        static const char *const shapes[] = { "auto", "pair", "ring", "mesh", "switch" };

        *why = "one of auto, pair, ring, mesh, switch";
        for (size_t i = 0; i < ARRAY_SIZE(shapes); i++)
                if (strcmp(value, shapes[i]) == 0) {
                        snprintf(p->config->cluster_topology, sizeof(p->config->cluster_topology), "%s",
                                 value);
                        return 0;
                }
        return -EINVAL;
}

static int parse_cluster_rendezvous(struct conf_parse *p, const char *value, const char **why)
{
        *why = "one of auto, fabric, management";
        if (strcmp(value, "auto") != 0 && strcmp(value, "fabric") != 0 && strcmp(value, "management") != 0)
                return -EINVAL;
        snprintf(p->config->cluster_rendezvous, sizeof(p->config->cluster_rendezvous), "%s", value);
        return 0;
}

static int parse_helper_dir(struct conf_parse *p, const char *value, const char **why)
{
        int r = parse_absolute_path(value, PATH_MAX - 64, why);

        return r < 0 ? r : conf_replace_string(&p->config->probe_helper_dir, value);
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

static int parse_export_directory(struct conf_parse *p, const char *value, const char **why)
{
        int r;

        if (!*value) {
                free(p->config->export_directory);
                p->config->export_directory = NULL;
                return 0;
        }
        r = parse_absolute_path(value, PATH_MAX - 2 * LAUNCHER_SPARKRUN_NAME_MAX, why);
        if (r < 0)
                return r;
        *why = "an absolute path other than /";
        if (strcmp(value, "/") == 0)
                return -EINVAL;
        return conf_replace_string(&p->config->export_directory, value);
}

static int parse_sparkrun_name(struct conf_parse *p, const char *value, const char **why)
{
        *why = "a sparkrun cluster name: letters, digits, '_' and '-', a letter or digit first, at most 64";
        if (!launcher_sparkrun_name_ok(value))
                return -EINVAL;
        snprintf(p->config->export_sparkrun_name, sizeof(p->config->export_sparkrun_name), "%s", value);
        return 0;
}

enum conf_value_type {
        CONF_VALUE_CUSTOM,   /* parse decides */
        CONF_VALUE_UINT,     /* a decimal number in [min, max] */
        CONF_VALUE_OCTAL,    /* an octal number in [min, max] */
        CONF_VALUE_DURATION, /* microseconds in [min, max]; "0" is 0 when zero_is_off */
        CONF_VALUE_SIZE,     /* bytes in [min, max], with K, M, G suffixes */
        CONF_VALUE_REAL,     /* a double in [min_real, max_real] */
        CONF_VALUE_BOOL,     /* yes or no; def is 0 or 1 */
};

struct conf_key {
        const char *section;
        const char *name;
        enum conf_value_type type;
        /* The field of struct sparkd_config the value goes to; integers of 2, 4 or 8 bytes. */
        size_t offset, size;
        uint64_t min, max, def;
        double min_real, max_real, def_real;
        bool zero_is_off; /* "0" turns it off, though 0 is below min */
        const char *why;  /* what a value is, said after "expected" */
        /* CONF_VALUE_CUSTOM: returns 0, or a negative errno with *why set. */
        int (*parse)(struct conf_parse *p, const char *value, const char **why);
};

#define SEC  1000000ULL
#define HOUR (3600 * SEC)
#define DAY  (24 * HOUR)
#define GIB  (1ULL << 30)

/* The table's row shapes: the field, then range and default (what a value is goes in .why). */
#define FIELD_SIZE(f)                 sizeof(((struct sparkd_config *)0)->f)
#define FIELD(f)                      .offset = offsetof(struct sparkd_config, f), .size = FIELD_SIZE(f)
#define RANGE(lo, hi, d)              .min = (lo), .max = (hi), .def = (d)
#define UINT_KEY(f, lo, hi, d)        .type = CONF_VALUE_UINT, FIELD(f), RANGE(lo, hi, d)
#define OCTAL_KEY(f, lo, hi, d)       .type = CONF_VALUE_OCTAL, FIELD(f), RANGE(lo, hi, d)
#define USEC_KEY(f, lo, hi, d)        .type = CONF_VALUE_DURATION, FIELD(f), RANGE(lo, hi, d)
#define USEC_OR_OFF_KEY(f, lo, hi, d) USEC_KEY(f, lo, hi, d), .zero_is_off = true
#define SIZE_KEY(f, lo, hi, d)        .type = CONF_VALUE_SIZE, FIELD(f), RANGE(lo, hi, d)
#define REAL_RANGE(lo, hi, d)         .min_real = (lo), .max_real = (hi), .def_real = (d)
#define REAL_KEY(f, lo, hi, d)        .type = CONF_VALUE_REAL, FIELD(f), REAL_RANGE(lo, hi, d)
#define BOOL_KEY(f, d)                .type = CONF_VALUE_BOOL, FIELD(f), .def = (d)
#define CUSTOM_KEY(fn)                .type = CONF_VALUE_CUSTOM, .parse = (fn)

/* Every key, in the order of the documentation. */
/* clang-format off */
static const struct conf_key keys[] = {
        { "daemon", "node_name",          CUSTOM_KEY(parse_node_name) },
        { "daemon", "mode",               CUSTOM_KEY(parse_mode) },
        { "daemon", "state_dir",          CUSTOM_KEY(parse_state_dir) },
        { "daemon", "log_level",          CUSTOM_KEY(parse_log_level) },
        { "daemon", "recheck_interval",   USEC_KEY(recheck_usec, SEC, HOUR, 60 * SEC),
          .why = "a duration from 1s to 1h, such as 30s or 5m" },
        { "daemon", "host_root",          CUSTOM_KEY(parse_host_root) },
        { "fabric", "interfaces",         CUSTOM_KEY(parse_fabric_interfaces) },
        { "fabric", "down",               CUSTOM_KEY(parse_fabric_down) },
        { "fabric", "rdma",               BOOL_KEY(fabric_rdma, true),
          .why = "yes or no" },
        { "fabric", "ring_merge_nics",    CUSTOM_KEY(parse_ring_merge_nics) },
        { "fabric", "mtu",                UINT_KEY(fabric_mtu, CONF_MTU_MIN, CONF_MTU_MAX, 9000),
          .why = "an MTU from " STRINGIFY(CONF_MTU_MIN) " to " STRINGIFY(CONF_MTU_MAX) },
        { "fabric", "flap_threshold",     UINT_KEY(flap_threshold, 2, 1000, 3),
          .why = "a number of link changes from 2 to 1000" },
        { "fabric", "flap_window",        USEC_KEY(flap_window_usec, SEC, HOUR, 60 * SEC),
          .why = "a duration from 1s to 1h, such as 60s" },
        { "fabric", "lldpd_socket",       CUSTOM_KEY(parse_lldpd_socket) },
        { "peers", "port",                UINT_KEY(peer_port, 1, 65535, 7471),
          .why = "a TCP port from 1 to 65535" },
        { "peers", "key_file",            CUSTOM_KEY(parse_key_file) },
        { "peers", "static",              CUSTOM_KEY(conf_parse_static_peers) },
        { "peers", "mdns",                BOOL_KEY(mdns, true),
          .why = "yes or no" },
        { "peers", "heartbeat_interval",  USEC_KEY(heartbeat_usec, SEC / 10, 60 * SEC, 2 * SEC),
          .why = "a duration from 100ms to 60s" },
        { "peers", "timeout",             USEC_KEY(peer_timeout_usec, SEC, 600 * SEC, 6 * SEC),
          .why = "a duration from 1s to 10m" },
        { "peers", "max_learned",         UINT_KEY(peer_max_learned, 1, 4096, 256),
          .why = "a number of peers from 1 to 4096" },
        { "peers", "forget_after",        USEC_KEY(peer_forget_after_usec, SEC, DAY, 10 * 60 * SEC),
          .why = "a duration from 1s to 1d, such as 10m" },
        { "cluster", "forget_after",      USEC_KEY(cluster_forget_after_usec, 60 * SEC, 30 * DAY, DAY),
          .why = "a duration from 1m to 30d, such as 1d" },
        { "cluster", "topology",          CUSTOM_KEY(parse_cluster_topology) },
        { "cluster", "nodes",             UINT_KEY(cluster_nodes, 0, 254, 0),
          .why = "a number of nodes from 0 (no expectation) to 254" },
        { "cluster", "head",              CUSTOM_KEY(parse_cluster_head) },
        { "cluster", "rendezvous",        CUSTOM_KEY(parse_cluster_rendezvous) },
        { "probe", "helper_dir",          CUSTOM_KEY(parse_helper_dir) },
        { "probe", "history_size",        UINT_KEY(probe_history_size, 10, 100000, 1000),
          .why = "a number of results from 10 to 100000" },
        { "probe", "expect_tcp_gbps",     REAL_KEY(probe_expect_tcp_gbps, 0, 10000, 0),
          .why = "Gb/s from 0 (learn from the first results) to 10000" },
        { "probe", "expect_rtt_us",       REAL_KEY(probe_expect_rtt_us, 0, 10000000, 0),
          .why = "microseconds from 0 (learn from the first results) to 10000000" },
        { "probe", "expect_nccl_busbw",   REAL_KEY(probe_expect_nccl_busbw, 0, 10000, 0),
          .why = "GB/s of bus bandwidth from 0 (learn from the first results) to 10000" },
        { "probe", "expect_rdma_gbps",    REAL_KEY(probe_expect_rdma_gbps, 0, 10000, 0),
          .why = "Gb/s from 0 (the port's payload rate, or learn from the first results) to 10000" },
        { "probe", "degraded_ratio",      REAL_KEY(probe_degraded_ratio, 0.05, 1, 0.8),
          .why = "a fraction of the expected value from 0.05 to 1" },
        { "probe", "busy_gbps",           REAL_KEY(probe_busy_gbps, 0, 10000, 1),
          .why = "Gb/s from 0 (never busy) to 10000" },
        { "probe", "interval",            USEC_OR_OFF_KEY(probe_interval_usec, 10 * SEC, 7 * DAY, HOUR),
          .why = "0 (off) or a duration from 10s to 7d" },
        { "probe", "jitter",              USEC_OR_OFF_KEY(probe_jitter_usec, 1, HOUR, 300 * SEC),
          .why = "a duration from 0 to 1h" },
        { "probe", "rtt_interval",        USEC_OR_OFF_KEY(probe_rtt_interval_usec, SEC, 7 * DAY, 300 * SEC),
          .why = "0 (off) or a duration from 1s to 7d" },
        { "probe", "duration",            UINT_KEY(probe_duration_sec, 1, 600, 5),
          .why = "seconds from 1 to 600" },
        { "probe", "streams",             UINT_KEY(probe_streams, 1, 64, 4),
          .why = "a number of TCP streams from 1 to 64" },
        { "probe", "kinds",               CUSTOM_KEY(conf_parse_probe_kinds) },
        { "probe", "rdma_twins",          CUSTOM_KEY(conf_parse_rdma_twins) },
        { "probe", "memory_margin",       SIZE_KEY(probe_memory_margin, 0, 1024 * GIB,
                                                   CONF_PROBE_MEMORY_MARGIN_DEFAULT),
          .why = "a size from 0 to 1024G (K, M, G suffixes)" },
        { "probe", "bandwidth_nice",      UINT_KEY(probe_bandwidth_nice, 0, 19, 10),
          .why = "a niceness from 0 to 19 (added to sparkd's own)" },
        { "diagnosis", "healthy_gbps",    REAL_KEY(diagnosis_healthy_gbps, 0.001, 10000, 80),
          .why = "Gb/s per rail from 0.001 to 10000" },
        { "diagnosis", "stale_min_gbps",  REAL_KEY(diagnosis_stale_min_gbps, 0, 10000, 8),
          .why = "Gb/s per rail from 0 to 10000" },
        { "diagnosis", "stale_max_gbps",  REAL_KEY(diagnosis_stale_max_gbps, 0.001, 10000, 25),
          .why = "Gb/s per rail from 0.001 to 10000" },
        { "diagnosis", "stale_tcp_streams", UINT_KEY(diagnosis_stale_tcp_streams, 0, 64, 0),
          .why = "0 (tcp never shows stale-initialization) or a number of TCP streams up to 64" },
        { "counters", "period",           USEC_OR_OFF_KEY(counters_period_usec, SEC, HOUR, 10 * SEC),
          .why = "0 (off) or a duration from 1s to 1h" },
        { "counters", "window",           USEC_KEY(counters_window_usec, 10 * SEC, DAY, 60 * SEC),
          .why = "a duration from 10s to 1d" },
        { "counters", "fatal",            CUSTOM_KEY(conf_parse_counters_fatal) },
        { "counters", "symbol_error_per_sec", REAL_KEY(counters_symbol_error_per_sec, 0, 1e9, 10),
          .why = "errors per second from 0 (no threshold) to 1000000000" },
        { "counters", "link_error_recovery_per_min", REAL_KEY(counters_link_error_recovery_per_min,
                                                              0, 1e9, 5),
          .why = "recoveries per minute from 0 (no threshold) to 1000000000" },
        { "counters", "roce_slow_restart_per_sec", REAL_KEY(counters_roce_slow_restart_per_sec, 0, 1e9, 10),
          .why = "slow restarts per second from 0 (no threshold) to 1000000000" },
        { "counters", "discards_per_sec", REAL_KEY(counters_discards_per_sec, 0, 1e9, 0),
          .why = "packets per second from 0 (no threshold) to 1000000000" },
        { "counters", "pause_frames_per_sec", REAL_KEY(counters_pause_frames_per_sec, 0, 1e9, 0),
          .why = "pause frames per second from 0 (no threshold) to 1000000000" },
        { "metrics", "textfile",          CUSTOM_KEY(parse_textfile) },
        { "export", "directory",          CUSTOM_KEY(parse_export_directory) },
        { "export", "sparkrun_name",      CUSTOM_KEY(parse_sparkrun_name) },
        { "api", "socket",                CUSTOM_KEY(parse_socket_path) },
        { "api", "socket_mode",           OCTAL_KEY(socket_mode, 0, 0777, 0660),
          .why = "an octal file mode such as 0660" },
        { "api", "socket_group",          CUSTOM_KEY(parse_socket_group) },
        { "api", "admin_group",           CUSTOM_KEY(parse_admin_group) },
        { "api", "max_clients",           UINT_KEY(max_clients, 1, 65536, 256),
          .why = "a number from 1 to 65536" },
        { "api", "reserved_admin_clients", UINT_KEY(reserved_admin_clients, 0, 32768, 16),
          .why = "a number from 0 to 32768" },
        { "api", "max_clients_per_uid",   UINT_KEY(max_clients_per_uid, 1, 65536, 64),
          .why = "a number from 1 to 65536" },
};
/* clang-format on */

bool conf_section_exists(const char *section)
{
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
                if (strcmp(keys[i].section, section) == 0)
                        return true;
        return false;
}

const struct conf_key *conf_key_find(const char *section, const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
                if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
                        return &keys[i];
        return NULL;
}

static void store_uint(struct sparkd_config *c, const struct conf_key *key, uint64_t value)
{
        void *field = (char *)c + key->offset;
        uint16_t u16 = (uint16_t)value;
        uint32_t u32 = (uint32_t)value;

        if (key->size == sizeof(u16))
                memcpy(field, &u16, sizeof(u16));
        else if (key->size == sizeof(u32))
                memcpy(field, &u32, sizeof(u32));
        else
                memcpy(field, &value, sizeof(value));
}

/* The integer fields are stored by size; mode_t is the one not spelled as a fixed width. */
_Static_assert(sizeof(mode_t) == sizeof(uint32_t), "socket_mode is stored as 4 bytes");

static int parse_duration(const struct conf_key *key, const char *value, uint64_t *out)
{
        uint64_t usec;
        int r;

        if (key->zero_is_off && strcmp(value, "0") == 0) {
                *out = 0;
                return 0;
        }
        r = parse_duration_usec(value, &usec);
        if (r < 0)
                return r;
        if (usec < key->min || usec > key->max)
                return -ERANGE;
        *out = usec;
        return 0;
}

int conf_key_set(struct conf_parse *p, const struct conf_key *key, const char *value, const char **why)
{
        void *field = (char *)p->config + key->offset;
        uint64_t n = 0;
        int r;

        if (key->type == CONF_VALUE_CUSTOM)
                return key->parse(p, value, why);
        *why = key->why;
        switch (key->type) {
        case CONF_VALUE_REAL:
                return parse_double(value, key->min_real, key->max_real, field);
        case CONF_VALUE_BOOL:
                return parse_bool(value, field);
        case CONF_VALUE_OCTAL:
                r = parse_uint64(value, 8, key->min, key->max, &n);
                break;
        case CONF_VALUE_DURATION:
                r = parse_duration(key, value, &n);
                break;
        case CONF_VALUE_SIZE:
                r = parse_size(value, key->min, key->max, &n);
                break;
        default:
                r = parse_uint64(value, 10, key->min, key->max, &n);
                break;
        }
        if (r < 0)
                return r;
        store_uint(p->config, key, n);
        return 0;
}

void conf_keys_set_defaults(struct sparkd_config *c)
{
        for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
                const struct conf_key *key = &keys[i];

                if (key->type == CONF_VALUE_REAL)
                        *(double *)((char *)c + key->offset) = key->def_real;
                else if (key->type == CONF_VALUE_BOOL)
                        *(bool *)((char *)c + key->offset) = key->def;
                else if (key->type != CONF_VALUE_CUSTOM)
                        store_uint(c, key, key->def);
        }
}
