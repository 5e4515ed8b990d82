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

static json_object *environ_json(void)
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
static json_object *user_conf_json(void)
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
        o = json_object_new_object();
        json_object_object_add(o, "path", json_object_new_string(path));
        json_object_object_add(o, "text", json_object_new_string_len(text, (int)strnlen(text, len)));
        return o;
}

int cmd_env_check(const struct client_options *o)
{
        json_object *params = json_object_new_object(), *memlock, *conf, *status;
        struct jsonrpc_response resp;
        struct rlimit rl;
        int r;

        json_object_object_add(params, "environ", environ_json());
        if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
                memlock = json_object_new_object();
                json_object_object_add(memlock, "soft", limit_json(rl.rlim_cur));
                json_object_object_add(memlock, "hard", limit_json(rl.rlim_max));
                json_object_object_add(params, "memlock", memlock);
        }
        conf = user_conf_json();
        if (conf)
                json_object_object_add(params, "nccl_conf", conf);
        r = client_call(o, "env-check", params, &resp);
        if (r < 0)
                return ENV_CHECK_EXIT_UNKNOWN;
        if (o->json) {
                client_print_json(resp.result);
                r = !json_object_object_get_ex(resp.result, "status", &status) ? ENV_CHECK_EXIT_UNKNOWN
                    : strcmp(json_object_get_string(status), "ok") == 0        ? ENV_CHECK_EXIT_OK
                    : strcmp(json_object_get_string(status), "warn") == 0      ? ENV_CHECK_EXIT_WARN
                                                                               : ENV_CHECK_EXIT_ERROR;
        } else
                r = report_env_check(stdout, resp.result);
        jsonrpc_response_done(&resp);
        return r;
}
