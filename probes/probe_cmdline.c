#include "probe_cmdline.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "config.h"

/* Long-only options get these values from getopt_long: past every character. */
#define LONG_ONLY_BASE 256

/* An entry's given is 0 for none: no option is told it was given through is_server. */
_Static_assert(offsetof(struct probe_args, is_server) == 0, "is_server must come first in probe_args");

int probe_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
        return parse_size(s, min, max, out);
}

int probe_parse_seconds(const char *s, double min, double max, double *out)
{
        return parse_double(s, min, max, out);
}

int probe_parse_ipv4(const char *s, struct in_addr *out)
{
        if (!s)
                return -EINVAL;
        if (!*s) {
                out->s_addr = htonl(INADDR_ANY);
                return 0;
        }
        return inet_pton(AF_INET, s, out) == 1 ? 0 : -EINVAL;
}

int probe_opt_uint(const char *name, const char *arg, uint64_t min, uint64_t max, uint64_t *out, char *err,
                   size_t err_size)
{
        int r = parse_uint64(arg, 10, min, max, out);

        if (r < 0)
                snprintf(err, err_size, "%s wants a whole number from %llu to %llu, not '%s'", name,
                         (unsigned long long)min, (unsigned long long)max, arg);
        return r;
}

int probe_opt_size(const char *name, const char *arg, uint64_t min, uint64_t max, uint64_t *out, char *err,
                   size_t err_size)
{
        int r = probe_parse_size(arg, min, max, out);

        if (r < 0)
                snprintf(err, err_size,
                         "%s wants a size in bytes from %llu to %llu (K and M suffixes allowed), not '%s'",
                         name, (unsigned long long)min, (unsigned long long)max, arg);
        return r;
}

int probe_opt_seconds(const char *name, const char *arg, double min, double max, double *out, char *err,
                      size_t err_size)
{
        int r = probe_parse_seconds(arg, min, max, out);

        if (r == 0 && !(*out > 0))
                r = -ERANGE;
        if (r < 0)
                snprintf(err, err_size, "%s wants seconds, more than 0 and at most %g, not '%s'", name, max,
                         arg);
        return r;
}

int probe_opt_ipv4(const char *name, const char *arg, bool allow_any, struct in_addr *out, char *err,
                   size_t err_size)
{
        int r = probe_parse_ipv4(arg, out);

        if (r == 0 && !allow_any && out->s_addr == htonl(INADDR_ANY))
                r = -EINVAL;
        if (r < 0)
                snprintf(err, err_size, "%s wants an IPv4 address like 10.0.0.2, not '%s'", name, arg);
        return r;
}

/* A whole number into a field of its size (the table's bounds keep it in range). */
static void store_uint(void *field, size_t size, uint64_t v)
{
        switch (size) {
        case 1:
                *(uint8_t *)field = (uint8_t)v;
                break;
        case 2:
                *(uint16_t *)field = (uint16_t)v;
                break;
        case 4:
                *(uint32_t *)field = (uint32_t)v;
                break;
        default:
                *(uint64_t *)field = v;
                break;
        }
}

/* Checks one option's value and stores it where the table says. */
static int opt_read(const struct probe_opt *opt, const char *arg, struct probe_args *args, void *own,
                    char *err, size_t err_size)
{
        char *field = (char *)(opt->flags & PROBE_OPT_SHARED ? (void *)args : own) + opt->field;
        char name[64];
        uint64_t v;
        int r = 0;

        snprintf(name, sizeof(name), "--%s", opt->name);
        switch (opt->arg) {
        case PROBE_ARG_FLAG:
                *(bool *)field = true;
                break;
        case PROBE_ARG_UINT:
        case PROBE_ARG_SIZE:
                r = (opt->arg == PROBE_ARG_UINT ? probe_opt_uint : probe_opt_size)(
                        name, arg, (uint64_t)opt->min, (uint64_t)opt->max, &v, err, err_size);
                if (r == 0)
                        store_uint(field, opt->field_size, v);
                break;
        case PROBE_ARG_SECONDS:
                r = probe_opt_seconds(name, arg, opt->min, opt->max, (double *)field, err, err_size);
                break;
        case PROBE_ARG_IPV4:
        case PROBE_ARG_IPV4_ANY:
                r = probe_opt_ipv4(name, arg, opt->arg == PROBE_ARG_IPV4_ANY, (struct in_addr *)field, err,
                                   err_size);
                break;
        case PROBE_ARG_TEXT:
                *(const char **)field = arg;
                break;
        case PROBE_ARG_CALL:
                r = opt->read(arg, own, err, err_size);
                break;
        }
        if (opt->given)
                *(bool *)((char *)args + opt->given) = true;
        if (opt->flags & PROBE_OPT_CLIENT)
                args->remote_arg = arg;
        if (opt->flags & PROBE_OPT_CLIENT_ONLY)
                args->has_client_options = true;
        return r < 0 ? -EINVAL : 0;
}

/* The options every helper takes the same way, after its table's. */
static const struct probe_opt every_helper[] = {
        { .name = "json", .arg = PROBE_ARG_FLAG, PROBE_SHARED(is_json, 0) },
        { .name = "help", .letter = 'h', .arg = PROBE_ARG_FLAG, PROBE_SHARED(want_help, 0) },
        { .name = "version", .arg = PROBE_ARG_FLAG, PROBE_SHARED(want_version, 0) },
};

/* The helper's table and every_helper's in one, ended by an entry without a name. */
static struct probe_opt *opts_join(const struct probe_opt *own)
{
        size_t n = 0;
        struct probe_opt *all;

        while (own[n].name)
                n++;
        all = calloc(n + ARRAY_SIZE(every_helper) + 1, sizeof(*all));
        if (!all)
                return NULL;
        memcpy(all, own, n * sizeof(*own));
        memcpy(all + n, every_helper, sizeof(every_helper));
        return all;
}

/* getopt_long's tables from opts: shorts is ":" and a letter (with ':' when it takes a value) per
 * option that has one. */
static int getopt_tables(const struct probe_opt *opts, struct option **longopts, char *shorts, size_t size)
{
        size_t n = 0, len = 0;

        while (opts[n].name)
                n++;
        *longopts = calloc(n + 1, sizeof(**longopts));
        if (!*longopts)
                return -ENOMEM;
        shorts[len++] = ':';
        for (size_t i = 0; i < n; i++) {
                bool has_arg = opts[i].arg != PROBE_ARG_FLAG;

                (*longopts)[i] =
                        (struct option){ .name = opts[i].name,
                                         .has_arg = has_arg ? required_argument : no_argument,
                                         .val = opts[i].letter ? opts[i].letter : LONG_ONLY_BASE + (int)i };
                if (opts[i].letter && len + 3 < size) {
                        shorts[len++] = (char)opts[i].letter;
                        if (has_arg)
                                shorts[len++] = ':';
                }
        }
        shorts[len] = '\0';
        return 0;
}

static const struct probe_opt *opt_of(const struct probe_opt *opts, int c)
{
        for (size_t i = 0; opts[i].name; i++)
                if (c == (opts[i].letter ? opts[i].letter : LONG_ONLY_BASE + (int)i))
                        return &opts[i];
        return NULL;
}

/* "--a, --b and --c are for the client", unless the helper words it itself. */
static void client_only_error(const struct probe_cmdline *cmdline, char *err, size_t err_size)
{
        size_t n = 0, len = 0;

        if (cmdline->client_only_error) {
                snprintf(err, err_size, "%s", cmdline->client_only_error);
                return;
        }
        for (size_t i = 0; cmdline->opts[i].name; i++)
                n += !!(cmdline->opts[i].flags & PROBE_OPT_CLIENT_ONLY);
        err[0] = '\0';
        for (size_t i = 0, k = 0; cmdline->opts[i].name && len < err_size; i++) {
                const char *sep;

                if (!(cmdline->opts[i].flags & PROBE_OPT_CLIENT_ONLY))
                        continue;
                k++;
                sep = k == 1 ? "" : k == n ? " and " : ", ";
                len += (size_t)snprintf(err + len, err_size - len, "%s--%s", sep, cmdline->opts[i].name);
        }
        if (len < err_size)
                snprintf(err + len, err_size - len, " %s for the client", n == 1 ? "is" : "are");
}

/* What every helper checks once all options are read. */
static int roles_check(const struct probe_cmdline *cmdline, const struct probe_args *args, char *err,
                       size_t err_size)
{
        bool takes_port = false;

        for (size_t i = 0; cmdline->opts[i].name; i++)
                takes_port = takes_port || (cmdline->opts[i].flags & PROBE_OPT_PORT);
        if (args->is_server == !!args->remote_arg) {
                snprintf(err, err_size, "give either --server or --client ADDR");
                return -EINVAL;
        }
        if (args->is_server && args->has_client_options) {
                client_only_error(cmdline, err, err_size);
                return -EINVAL;
        }
        if (takes_port && !args->is_server && args->port == 0) {
                snprintf(err, err_size, "the client needs the server's --port (1..65535)");
                return -EINVAL;
        }
        return 0;
}

int probe_cmdline_parse(const struct probe_cmdline *cmdline, int argc, char **argv, struct probe_args *args,
                        void *own, char *err, size_t err_size)
{
        _cleanup_free_ struct probe_opt *opts = opts_join(cmdline->opts);
        _cleanup_free_ struct option *longopts = NULL;
        char shorts[128];
        int c, r;

        if (!opts || getopt_tables(opts, &longopts, shorts, sizeof(shorts)) < 0) {
                snprintf(err, err_size, "out of memory");
                return -ENOMEM;
        }
        optind = 0; /* from the start, also when a test parses again */
        opterr = 0;
        while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) >= 0) {
                const struct probe_opt *opt = opt_of(opts, c);

                if (c == ':') {
                        snprintf(err, err_size, "%s needs a value", argv[optind - 1]);
                        return -EINVAL;
                }
                if (!opt) {
                        snprintf(err, err_size, "unknown option %s", argv[optind - 1]);
                        return -EINVAL;
                }
                r = opt_read(opt, optarg, args, own, err, err_size);
                if (r < 0)
                        return r;
                if (args->want_help || args->want_version)
                        return 0;
        }
        if (optind < argc) {
                snprintf(err, err_size, "unexpected argument '%s'", argv[optind]);
                return -EINVAL;
        }
        r = roles_check(cmdline, args, err, err_size);
        if (r == 0 && cmdline->check)
                r = cmdline->check(args, own, err, err_size);
        return r;
}

int probe_cmdline_read(const struct probe_cmdline *cmdline, int argc, char **argv, struct probe_args *args,
                       void *own)
{
        char err[256];

        if (probe_cmdline_parse(cmdline, argc, argv, args, own, err, sizeof(err)) < 0)
                return probe_usage_error(cmdline->prog, "%s", err);
        if (args->want_help) {
                cmdline->usage();
                exit(0);
        }
        if (args->want_version) {
                printf("%s %s\n", cmdline->prog, SPARKD_VERSION);
                exit(0);
        }
        return 0;
}

int probe_usage_error(const char *prog, const char *fmt, ...)
{
        va_list ap;

        fprintf(stderr, "%s: ", prog);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry '%s --help'.\n", prog);
        return 2;
}
