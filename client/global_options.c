/* sparkc's global options, before the command or among its words. */
#include "global_options.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/strutil.h"

enum { GLOBAL_NONE = 0, GLOBAL_SOCKET = 's', GLOBAL_JSON = 'j', GLOBAL_TIMEOUT = 't' };

static const struct option global_long[] = {
        { "socket", required_argument, NULL, GLOBAL_SOCKET },
        { "json", no_argument, NULL, GLOBAL_JSON },
        { "timeout", required_argument, NULL, GLOBAL_TIMEOUT },
        {},
};

static int set_global(struct client_options *o, int which, const char *value)
{
        uint64_t sec;

        switch (which) {
        case GLOBAL_SOCKET:
                o->socket_path = value;
                return 0;
        case GLOBAL_JSON:
                o->json = true;
                return 0;
        default:
                if (parse_uint64(value, 10, 1, 86400, &sec) < 0) {
                        fprintf(stderr, "sparkc: --timeout needs whole seconds from 1 to 86400, not '%s'\n",
                                value);
                        return -EINVAL;
                }
                o->timeout_ms = (int)sec * 1000;
                return 0;
        }
}

/* The long option named by "--name" or "--name=value" (exactly or by a unique prefix), or NULL. */
static const struct option *long_option(const struct option *table, const char *word)
{
        size_t n = strcspn(word + 2, "=");
        const struct option *found = NULL;

        for (const struct option *opt = table; opt && opt->name; opt++) {
                if (strncmp(opt->name, word + 2, n) != 0)
                        continue;
                if (strlen(opt->name) == n)
                        return opt;
                if (found)
                        return NULL;
                found = opt;
        }
        return found;
}

/* Whether the short option letter is in getopt's string, and takes a value. */
static bool short_option(const char *short_options, char letter, bool *takes_value)
{
        const char *at = short_options && letter != ':' ? strchr(short_options, letter) : NULL;

        *takes_value = at && at[1] == ':';
        return at != NULL;
}

/*
 * The global option at argv[*i], taken with its value (*i moves past what it used): 1, 0 when the
 * word is no global option, -EINVAL when it is one given wrongly.
 */
static int take_global(struct client_options *o, int argc, char **argv, int *i)
{
        const char *word = argv[*i], *value = NULL;
        int which = GLOBAL_NONE;
        bool takes_value = false;

        if (strncmp(word, "--", 2) == 0 && word[2]) {
                const char *eq = strchr(word, '=');
                size_t n = eq ? (size_t)(eq - word - 2) : strlen(word + 2);

                /* Among a command's words only the full name counts: --s could be its own. */
                for (const struct option *opt = global_long; opt->name; opt++)
                        if (strlen(opt->name) == n && strncmp(opt->name, word + 2, n) == 0) {
                                which = opt->val;
                                takes_value = opt->has_arg == required_argument;
                        }
                if (which == GLOBAL_NONE)
                        return 0;
                if (eq && !takes_value) {
                        fprintf(stderr, "sparkc: --%.*s takes no value\n", (int)n, word + 2);
                        return -EINVAL;
                }
                value = eq ? eq + 1 : NULL;
        } else if (word[0] == '-' && word[1] && word[1] != '-') {
                if (!short_option("s:jt:", word[1], &takes_value))
                        return 0;
                which = word[1];
                if (!takes_value && word[2])
                        return 0;
                value = takes_value && word[2] ? word + 2 : NULL;
        } else {
                return 0;
        }
        if (takes_value && !value) {
                if (*i + 1 >= argc) {
                        fprintf(stderr, "sparkc: %s needs a value\n", word);
                        return -EINVAL;
                }
                value = argv[++*i];
        }
        return set_global(o, which, value) < 0 ? -EINVAL : 1;
}

int global_options_before(struct client_options *o, int argc, char **argv, bool *help, bool *version)
{
        int i;

        for (i = 1; i < argc && argv[i][0] == '-'; i++) {
                int r;

                if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                        *help = true;
                        continue;
                }
                if (strcmp(argv[i], "--version") == 0) {
                        *version = true;
                        continue;
                }
                r = take_global(o, argc, argv, &i);
                if (r < 0)
                        return r;
                if (r == 0) {
                        fprintf(stderr, "sparkc: unknown option '%s'\n", argv[i]);
                        return -EINVAL;
                }
        }
        return i;
}

/* Whether argv[i] is one of the command's own options whose value is the next word. */
static bool own_option_with_next_value(const struct command_options *own, const char *word)
{
        bool takes_value;

        if (!own)
                return false;
        if (strncmp(word, "--", 2) == 0) {
                const struct option *opt = long_option(own->long_options, word);

                return opt && opt->has_arg == required_argument && !strchr(word, '=');
        }
        return word[0] == '-' && word[1] && !word[2] &&
               short_option(own->short_options, word[1], &takes_value) && takes_value;
}

static bool is_own_short(const struct command_options *own, const char *word)
{
        bool takes_value;

        return own && word[0] == '-' && word[1] && word[1] != '-' &&
               short_option(own->short_options, word[1], &takes_value);
}

int global_options_after(struct client_options *o, int argc, char **argv, const struct command_options *own)
{
        int kept = 1, i;

        for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
                int r = 0;

                if (own_option_with_next_value(own, argv[i])) {
                        argv[kept++] = argv[i++];
                        if (i < argc)
                                argv[kept++] = argv[i];
                        continue;
                }
                if (!is_own_short(own, argv[i]))
                        r = take_global(o, argc, argv, &i);
                if (r < 0)
                        return r;
                if (r == 0)
                        argv[kept++] = argv[i];
        }
        while (i < argc)
                argv[kept++] = argv[i++];
        argv[kept] = NULL;
        return kept;
}
