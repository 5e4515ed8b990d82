#include "conf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <ini.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "common/file_read.h"
#include "common/macro.h"
#include "common/strutil.h"
#include "conf_keys.h"
#include "config.h"
#include "daemon/base/helper_dir.h"
#include "daemon/base/log.h"

/* Room for a [peers] static list of 64 host names of the longest DNS length on one line, with
 * the newline and the NUL that inih's buffer needs. */
#define CONF_MAX_LINE (64 * 1024)
/* Far beyond any real config, small enough that a stray huge file costs nothing to refuse. */
#define CONF_MAX_FILE_SIZE (1024 * 1024)
#define DEFAULT_SOCKET_GRP "sparkd"
#define DEFAULT_ADMIN_GRP  "sparkd-admin"

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
                conf_add_error(p->errors, p->file, p->line,
                               "\"%s\" is not a sysctl name (such as net.core.rmem_max)", name);
                return 0;
        }
        for (char *c = path + strlen("/proc/sys/"); *c; c++)
                if (*c == '.')
                        *c = '/';
        if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
                conf_add_error(p->errors, p->file, p->line, "unknown sysctl \"%s\" (no %s)", name, path);
                return 0;
        }
        if (strchr(value, '\n')) {
                conf_add_error(p->errors, p->file, p->line, "%s: a value on one line", name);
                return 0;
        }
        return conf_set_sysctl(p->config, name, value) < 0 ? 0 : 1;
}

static int conf_handler(void *userdata, const char *section, const char *name, const char *value)
{
        struct conf_parse *p = userdata;
        const struct conf_key *key;
        const char *why = NULL;
        int r;

        if (!*section) {
                conf_add_error(p->errors, p->file, p->line, "\"%s\" is outside any [section]", name);
                return 0;
        }
        if (strcmp(section, "sysctl") == 0)
                return conf_handle_sysctl(p, name, value);
        if (!conf_section_exists(section)) {
                conf_add_error(p->errors, p->file, p->line, "unknown section [%s]", section);
                return 0;
        }
        key = conf_key_find(section, name);
        if (!key) {
                conf_add_error(p->errors, p->file, p->line, "unknown key \"%s\" in [%s]", name, section);
                return 0;
        }
        r = conf_key_set(p, key, value, &why);
        if (r == -ENOMEM)
                return 0;
        if (r < 0) {
                conf_add_error(p->errors, p->file, p->line, "%s=\"%s\": expected %s", name, value,
                               why ? why : "a valid value");
                return 0;
        }
        return 1;
}

/* What inih accepts: blank, a comment, "[section]", or a name with "=" or ":" after it. */
static bool line_is_ini(const char *line)
{
        const char *s = line + strspn(line, " \t\r\n");

        if (*s == '\0' || *s == ';' || *s == '#')
                return true;
        if (*s == '[')
                return strchr(s, ']') != NULL;
        return s[strcspn(s, "=:")] != '\0' && strchr("=:", *s) == NULL;
}

/* inih reads through this so that the handler knows which line it is looking at, and so that an
 * overlong line or one with a NUL byte is reported instead of being split or cut short. */
static char *conf_reader(char *str, int num, void *userdata)
{
        struct conf_parse *p = userdata;
        const char *line = p->text + p->text_pos, *newline;
        size_t n;

        if (p->text_pos >= p->text_len)
                return NULL;
        newline = memchr(line, '\n', p->text_len - p->text_pos);
        n = newline ? (size_t)(newline - line) + 1 : p->text_len - p->text_pos;
        p->text_pos += n;
        p->line++;
        /* A NUL would end the line for inih and everything after it would be dropped unseen. */
        if (memchr(line, '\0', n)) {
                conf_add_error(p->errors, p->file, p->line, "a NUL byte; the config is text");
                snprintf(str, (size_t)num, "\n");
                return str;
        }
        /* num is the buffer inih really gave, whatever was asked of it: the limit told is that one. */
        if (n >= (size_t)num) {
                conf_add_error(p->errors, p->file, p->line,
                               "a line of %zu bytes; the limit is %d bytes, not counting the newline",
                               n - (line[n - 1] == '\n'), num - 2);
                snprintf(str, (size_t)num, "\n");
                return str;
        }
        memcpy(str, line, n);
        str[n] = '\0';
        if (!line_is_ini(str)) {
                /* Said here, and blanked for inih, which would report only the first such line. */
                conf_add_error(p->errors, p->file, p->line, "expected \"[section]\" or \"key = value\"");
                snprintf(str, (size_t)num, "\n");
        }
        return str;
}

/* A file that cannot be read is an error with the path and the reason; a symlink that leads
 * nowhere says where it points. */
static void conf_add_read_error(struct conf_parse *p, const char *file, int error, const char *why)
{
        char target[PATH_MAX];
        ssize_t n;

        if (error != -ENOENT && error != -ELOOP) {
                conf_add_error(p->errors, NULL, 0, "%s", why);
                return;
        }
        n = readlink(file, target, sizeof(target) - 1);
        if (n < 0) {
                conf_add_error(p->errors, file, 0, "cannot read: %s", strerror(-error));
                return;
        }
        target[n] = '\0';
        conf_add_error(p->errors, file, 0, "a symlink to %s, which %s; expected a regular file", target,
                       error == -ELOOP ? "is a symlink loop" : "does not exist");
}

/* The whole file is read first, as a regular file of bounded size: a FIFO, a device or a
 * directory is refused without waiting, and a huge file without filling memory. Every error is
 * reported here, but for -ENOENT when may_be_missing and there is nothing by that name. */
static int conf_parse_file(struct conf_parse *p, const char *file, bool may_be_missing)
{
        _cleanup_free_ char *text = NULL;
        size_t errors_before = p->errors->n, len;
        char why[PATH_MAX + 128];
        struct stat st;
        int line, r;

        r = file_read_regular(AT_FDCWD, file, 0, CONF_MAX_FILE_SIZE, &text, &len, why, sizeof(why));
        if (r == -ENOENT && may_be_missing && lstat(file, &st) < 0 && errno == ENOENT)
                return r;
        if (r < 0) {
                if (r != -ENOMEM)
                        conf_add_read_error(p, file, r, why);
                return r;
        }
        p->file = file;
        p->text = text;
        p->text_len = len;
        p->text_pos = 0;
        p->line = 0;
        p->file_index++;
        line = ini_parse_stream(conf_reader, p, conf_handler, p);
        p->text = NULL;
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
                        conf_add_error(p->errors, file, (unsigned)line,
                                       "expected \"[section]\" or \"key = value\"");
        }
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
                return errno == ENOENT || errno == ENOTDIR
                               ? 0
                               : conf_add_error(p->errors, dir, 0, "cannot read: %m");
        for (int i = 0; i < n; i++) {
                _cleanup_free_ char *file = NULL;

                if (r == 0 && asprintf(&file, "%s/%s", dir, names[i]->d_name) < 0)
                        r = -ENOMEM;
                if (r == 0) {
                        int q = conf_parse_file(p, file, false);

                        if (q == -ENOMEM)
                                r = q;
                        else if (q == 0)
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
        snprintf(c->cluster_topology, sizeof(c->cluster_topology), "auto");
        c->ring_merge_nics = -1;
        snprintf(c->cluster_rendezvous, sizeof(c->cluster_rendezvous), "auto");
        c->log_level = LOG_INFO;
        conf_keys_set_defaults(c);
        if (conf_set_host_root(c, "/") < 0)
                return -ENOMEM;
        c->probe_helper_dir = strdup(helper_dir_default());
        if (!c->probe_helper_dir || strv_push(&c->probe_kinds, "tcp") < 0 ||
            strv_split(CONF_COUNTERS_FATAL_DEFAULT, &c->counters_fatal) < 0)
                return -ENOMEM;
        c->key_file = strdup(SPARKD_KEY_PATH);
        c->lldpd_socket = strdup(CONF_LLDPD_SOCKET_DEFAULT);
        if (!c->key_file || !c->lldpd_socket)
                return -ENOMEM;
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

        /* The runtime knobs of Debian's inih: one key per line, no continuation lines. Its heap
         * line buffer is ini_initial_alloc bytes and grows only with realloc allowed: ini_max_line
         * alone leaves it at the 200 bytes it was built with. */
        ini_allow_multiline = false;
        ini_use_stack = false;
        ini_allow_realloc = false;
        ini_initial_alloc = CONF_MAX_LINE;
        ini_max_line = CONF_MAX_LINE;

        r = conf_set_defaults(c, path);
        if (r < 0)
                goto fail;

        r = conf_parse_file(&p, path, !must_exist);
        c->path_found = r == 0;
        if (r == 0)
                r = strv_push(&c->files_read, path);
        else if (r != -ENOMEM)
                r = 0; /* reported, or the default path with nothing there */
        if (r >= 0)
                r = conf_parse_dropins(&p, path);
        if (r < 0)
                goto fail;

        if (!(c->diagnosis_stale_min_gbps < c->diagnosis_stale_max_gbps &&
              c->diagnosis_stale_max_gbps < c->diagnosis_healthy_gbps))
                conf_add_error(
                        errors, path, 0,
                        "[diagnosis] needs stale_min_gbps (%g) < stale_max_gbps (%g) < healthy_gbps (%g)",
                        c->diagnosis_stale_min_gbps, c->diagnosis_stale_max_gbps, c->diagnosis_healthy_gbps);
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
                conf_add_error(errors, NULL, 0, "out of memory");
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
        free(c->lldpd_socket);
        free(c->probe_helper_dir);
        free(c->cluster_head);
        free(c->metrics_textfile);
        free(c->export_directory);
        strv_free(c->static_peers);
        strv_free(c->probe_kinds);
        strv_free(c->counters_fatal);
        free(c->path);
        free(c->node_name);
        free(c->state_dir);
        free(c->socket_path);
        free(c->socket_group);
        free(c->admin_group);
        free(c);
}

const char *enforce_mode_to_string(enum enforce_mode mode)
{
        return mode == ENFORCE_MODE_AUDIT ? "audit" : "enforce";
}
