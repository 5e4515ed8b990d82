/* sparkc env --check: this process's environment for a job, its memlock limit and its NCCL config
 * file, sent to the daemon to be judged against this node. */
#include "commands.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/file_read.h"
#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/text_check.h"
#include "common/text_escape.h"
#include "report.h"

extern char **environ;

/* What the daemon takes (daemon/fabric/env_check.h); more is not sent. */
#define MAX_VARIABLES  256
#define MAX_NAME       128
#define MAX_VALUE      4096
#define MAX_CONF_BYTES (16 * 1024)

/* Only what a job's fabric use depends on leaves this process: the rest of an environment may
 * hold secrets (VLLM_API_KEY) and is none of the daemon's business. */
static bool is_sent(const char *name, size_t len)
{
        static const char *const prefixes[] = { "NCCL_", "UCX_", "GLOO_", "OMPI_MCA_" };
        static const char *const names[] = { "VLLM_HOST_IP", "SGLANG_HOST_IP", "MASTER_ADDR", "RAY_ADDRESS",
                                             "DIST_INIT_ADDR" };

        for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
                if (len > strlen(prefixes[i]) && strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
                        return true;
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (len == strlen(names[i]) && strncmp(name, names[i], len) == 0)
                        return true;
        return false;
}

/* A finding of this side: what cannot be sent to be judged (a byte that is not UTF-8), in the
 * daemon's form (env_check.h), added to its findings. */
static void add_finding(json_object *findings, bool is_error, const char *variable, const char *value,
                        const char *source, const char *problem, const char *fix)
{
        json_object *f = json_object_new_object();
        _cleanup_free_ char *shown = value ? escape_term_dup(value) : NULL;

        json_object_object_add(f, "severity", json_object_new_string(is_error ? "error" : "warning"));
        json_object_object_add(f, "variable", variable ? json_object_new_string(variable) : NULL);
        json_object_object_add(f, "value", shown ? json_object_new_string(shown) : NULL);
        json_object_object_add(f, "source", source ? json_object_new_string(source) : NULL);
        json_object_object_add(f, "problem", json_object_new_string(problem));
        json_object_object_add(f, "fix", json_object_new_string(fix));
        json_object_array_add(findings, f);
}

static json_object *environ_json(json_object *findings)
{
        json_object *o = json_object_new_object();
        size_t n = 0;

        for (char **e = environ; e && *e; e++) {
                const char *eq = strchr(*e, '=');
                char name[MAX_NAME + 1];
                size_t len = eq ? (size_t)(eq - *e) : 0;

                if (!eq || !is_sent(*e, len))
                        continue;
                if (len > MAX_NAME || strlen(eq + 1) > MAX_VALUE || n == MAX_VARIABLES) {
                        fprintf(stderr,
                                "sparkc: env --check: %.*s not judged: at most %d variables of %d-byte "
                                "names and %d-byte values are sent\n",
                                (int)(len > 64 ? 64 : len), *e, MAX_VARIABLES, MAX_NAME, MAX_VALUE);
                        continue;
                }
                snprintf(name, sizeof(name), "%.*s", (int)len, *e);
                {
                        size_t bad;
                        char problem[160];

                        if (!text_is_utf8(name, strlen(name), &bad) ||
                            !text_is_utf8(eq + 1, strlen(eq + 1), &bad)) {
                                snprintf(problem, sizeof(problem),
                                         "byte %zu of the value is not UTF-8 (a Latin-1 or binary byte): no "
                                         "NCCL setting takes it, and it is not judged",
                                         bad + 1);
                                add_finding(findings, true,
                                            text_is_utf8(name, strlen(name), NULL) ? name : "?", eq + 1,
                                            "environment", problem,
                                            "set the variable again in UTF-8 (or unset it)");
                                continue;
                        }
                }
                json_object_object_add(o, name, json_object_new_string(eq + 1));
                n++;
        }
        return o;
}

static json_object *limit_json(rlim_t v)
{
        return json_object_new_int64(v == RLIM_INFINITY ? -1 : (int64_t)v);
}

/*
 * The file NCCL reads for this user: $NCCL_CONF_FILE, else ~/.nccl.conf with the home directory
 * from the password database, as NCCL finds it (not $HOME). Read here, with the caller's own
 * permissions, and sent as text: the daemon never opens a path a user names.
 */
/* The lines of text that are not UTF-8 made empty (the line numbers stay), each with a finding. */
static void blank_bad_lines(char *text, size_t len, const char *path, json_object *findings)
{
        size_t line = 1;

        for (char *p = text; p < text + len; line++) {
                char *end = memchr(p, '\n', (size_t)(text + len - p));
                size_t n = end ? (size_t)(end - p) : (size_t)(text + len - p), bad;

                if (!text_is_utf8(p, n, &bad)) {
                        const char *lead = p + strspn(p, " \t");
                        bool is_comment = lead < p + n && *lead == '#';
                        char problem[700];

                        snprintf(
                                problem, sizeof(problem),
                                "%s line %zu: byte %zu is not UTF-8 (a Latin-1 or binary byte); the line is "
                                "not judged%s",
                                path, line, bad + 1, is_comment ? " (a comment, NCCL ignores it)" : "");
                        add_finding(findings, !is_comment, NULL, NULL, NULL, problem,
                                    "write the line again in UTF-8");
                        memset(p, ' ', n); /* the line stays, empty, so later lines keep their numbers */
                }
                p += n + 1;
        }
}

static json_object *user_conf_json(json_object *findings)
{
        _cleanup_free_ char *text = NULL;
        const char *file = getenv("NCCL_CONF_FILE");
        const struct passwd *pw;
        char path[512], why[512];
        json_object *o;
        size_t len;
        int r;

        if (file && file[0])
                snprintf(path, sizeof(path), "%s", file);
        else if ((pw = getpwuid(getuid())) && pw->pw_dir)
                snprintf(path, sizeof(path), "%s/.nccl.conf", pw->pw_dir);
        else
                return NULL;
        r = file_read_regular(AT_FDCWD, path, 0, MAX_CONF_BYTES, &text, &len, why, sizeof(why));
        if (r == -ENOENT)
                return NULL;
        if (r < 0) {
                fprintf(stderr, "sparkc: env --check: %s not judged: %s\n", path, why);
                return NULL;
        }
        len = strnlen(text, len);
        blank_bad_lines(text, len, path, findings);
        o = json_object_new_object();
        json_object_object_add(o, "path", json_object_new_string(path));
        json_object_object_add(o, "text", json_object_new_string_len(text, (int)strnlen(text, len)));
        return o;
}

int cmd_env_check(const struct client_options *o)
{
        json_object *params = json_object_new_object(), *memlock, *conf, *status, *findings;
        json_object *mine = json_object_new_array();
        struct jsonrpc_response resp;
        struct rlimit rl;
        int r;

        json_object_object_add(params, "environ", environ_json(mine));
        if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
                memlock = json_object_new_object();
                json_object_object_add(memlock, "soft", limit_json(rl.rlim_cur));
                json_object_object_add(memlock, "hard", limit_json(rl.rlim_max));
                json_object_object_add(params, "memlock", memlock);
        }
        conf = user_conf_json(mine);
        if (conf)
                json_object_object_add(params, "nccl_conf", conf);
        r = client_call(o, "env-check", params, &resp);
        if (r < 0) {
                json_object_put(mine);
                return ENV_CHECK_EXIT_UNKNOWN;
        }
        /* What could not be sent is judged here, with the rest. */
        if (json_object_array_length(mine) &&
            json_object_object_get_ex(resp.result, "findings", &findings) &&
            json_object_is_type(findings, json_type_array)) {
                bool is_error = false;

                for (size_t i = 0; i < json_object_array_length(mine); i++) {
                        json_object *f = json_object_array_get_idx(mine, i);

                        is_error |= strcmp(json_object_get_string(json_object_object_get(f, "severity")),
                                           "error") == 0;
                        json_object_array_add(findings, json_object_get(f));
                }
                if (is_error)
                        json_object_object_add(resp.result, "status", json_object_new_string("fail"));
                else if (strcmp(client_get_string(resp.result, "status", "ok"), "ok") == 0)
                        json_object_object_add(resp.result, "status", json_object_new_string("warn"));
        }
        if (o->json) {
                client_print_json(resp.result);
                r = !json_object_object_get_ex(resp.result, "status", &status) ? ENV_CHECK_EXIT_UNKNOWN
                    : strcmp(json_object_get_string(status), "ok") == 0        ? ENV_CHECK_EXIT_OK
                    : strcmp(json_object_get_string(status), "warn") == 0      ? ENV_CHECK_EXIT_WARN
                                                                               : ENV_CHECK_EXIT_ERROR;
        } else
                r = report_env_check(stdout, resp.result);
        jsonrpc_response_done(&resp);
        json_object_put(mine);
        return r;
}
