#include "conf.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <ini.h>
#include <limits.h>
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

static int add_error(struct conf_errors *errors, const char *file, unsigned line, const char *fmt, ...)
        _printf_(4, 5);

static int add_error(struct conf_errors *errors, const char *file, unsigned line, const char *fmt, ...)
{
        struct conf_error *v;
        char *message;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&message, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        v = realloc(errors->v, (errors->n + 1) * sizeof(*v));
        if (!v) {
                free(message);
                return -ENOMEM;
        }
        errors->v = v;
        v[errors->n++] =
                (struct conf_error){ .file = file ? strdup(file) : NULL, .line = line, .message = message };
        return 0;
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

static const struct conf_key conf_keys[] = {
        { "daemon", "node_name", parse_node_name },    { "daemon", "mode", parse_mode },
        { "daemon", "state_dir", parse_state_dir },    { "daemon", "log_level", parse_log_level },
        { "api", "socket", parse_socket_path },        { "api", "socket_mode", parse_socket_mode },
        { "api", "socket_group", parse_socket_group }, { "api", "admin_group", parse_admin_group },
        { "api", "max_clients", parse_max_clients },
};

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

        if (errors->n > 0) {
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

char *conf_error_format(const struct conf_error *e)
{
        char *s = NULL;
        int r;

        if (e->file && e->line)
                r = asprintf(&s, "%s:%u: %s", e->file, e->line, e->message);
        else if (e->file)
                r = asprintf(&s, "%s: %s", e->file, e->message);
        else
                r = asprintf(&s, "%s", e->message);
        return r < 0 ? NULL : s;
}

const char *enforce_mode_to_string(enum enforce_mode mode)
{
        return mode == ENFORCE_MODE_AUDIT ? "audit" : "enforce";
}
