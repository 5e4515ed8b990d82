/* sparkc status, version, reload and metrics: the daemon itself. */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "common/jsonrpc.h"
#include "common/strutil.h"
#include "common/text_escape.h"
#include "config.h"
#include "rpc.h"

/* The GID table moved since `sparkc env` was last asked: jobs started before may fail. */
static void print_env_changed(json_object *status)
{
        json_object *gid;
        const char *at;

        if (!json_object_object_get_ex(status, "gid", &gid) ||
            !(at = client_get_string(gid, "env_changed_at", NULL)))
                return;
        printf("env changed %s: %s; NCCL jobs started before then may fail (\"GID table changed\"); "
               "`sparkc env` gives the new environment\n",
               at, client_get_string(gid, "env_changed_reason", "?"));
}

static void print_state_dir(json_object *s)
{
        json_object *error = NULL;

        printf("state dir   %s", client_get_string(s, "state_dir", "?"));
        if (json_object_object_get_ex(s, "state_save_error", &error) && error)
                printf(" (saving fails: %s: %s)\n", client_get_string(error, "file", "?"),
                       client_get_string(error, "error", "?"));
        else
                printf("%s\n", client_get_bool(s, "state_saved") ? "" : " (unusable: nothing is saved)");
}

/* The first line: what a look at the node should tell first, and where to look next. */
static void print_health(json_object *status)
{
        json_object *health;

        if (!json_object_object_get_ex(status, "health", &health) || !health)
                return;
        if (!client_get_string(health, "first_problem", NULL)) {
                printf("health      %s\n", client_get_string(health, "status", "?"));
                return;
        }
        printf("health      %s: %s; `%s` shows more\n", client_get_string(health, "status", "?"),
               client_get_string(health, "first_problem", "?"), client_get_string(health, "command", "?"));
}

static void show_status(json_object *s)
{
        char uptime[64];

        print_health(s);
        format_duration_sec((uint64_t)client_get_double(s, "uptime_sec"), uptime, sizeof(uptime));
        printf("node        %s\n", client_get_string(s, "node", "?"));
        printf("node id     %s\n", client_get_string(s, "node_id", "?"));
        printf("version     %s (api %d)\n", client_get_string(s, "version", "?"),
               client_get_int(s, "api_version"));
        printf("uptime      %s (since %s)\n", uptime, client_get_string(s, "started_at", "?"));
        printf("mode        %s\n", client_get_string(s, "mode", "?"));
        printf("config      %s%s\n", client_get_string(s, "config_path", "?"),
               client_get_bool(s, "config_found") ? "" : " (not found: built-in defaults)");
        printf("socket      %s%s\n", client_get_string(s, "socket", "?"),
               client_get_bool(s, "socket_activated") ? " (from systemd)" : "");
        print_state_dir(s);
        print_env_changed(s);
}

int cmd_status(const struct client_options *o, int argc, char **argv)
{
        return client_show(o, argc, argv, show_status);
}

static void show_version(json_object *result)
{
        printf("sparkc %s\nsparkd %s (api %d)\n", SPARKD_VERSION, client_get_string(result, "version", "?"),
               client_get_int(result, "api_version"));
}

int cmd_version(const struct client_options *o, int argc, char **argv)
{
        return client_show(o, argc, argv, show_version);
}

static void print_config_errors(json_object *data)
{
        json_object *errors;

        if (!data || !json_object_object_get_ex(data, "errors", &errors) ||
            !json_object_is_type(errors, json_type_array))
                return;
        for (size_t i = 0; i < json_object_array_length(errors); i++) {
                json_object *e = json_object_array_get_idx(errors, i);
                int line = client_get_int(e, "line");

                if (line > 0)
                        fprintf(stderr, "  %s:%d: %s\n", client_get_string(e, "file", "?"), line,
                                client_get_string(e, "message", "?"));
                else
                        fprintf(stderr, "  %s%s%s\n", client_get_string(e, "file", ""),
                                json_object_object_get_ex(e, "file", NULL) ? ": " : "",
                                client_get_string(e, "message", "?"));
        }
}

int cmd_reload(const struct client_options *o, int argc, char **argv)
{
        struct rpc_client *c = NULL;
        struct jsonrpc_response resp;
        int r;

        if (client_no_args("reload", argc) < 0)
                return EXIT_DAEMON_ERROR;
        r = client_connect(o, &c);
        if (r < 0)
                return -r;
        r = rpc_call(c, "reload", NULL, &resp);
        rpc_close(c);
        if (r < 0) {
                fprintf(stderr, "sparkc: reload: no answer from sparkd at %s: %s\n", o->socket_path,
                        strerror(-r));
                return EXIT_UNREACHABLE;
        }
        if (resp.error_message) {
                fprintf(stderr, "sparkc: reload: %s (error %d)\n", resp.error_message, resp.error_code);
                print_config_errors(resp.error_data);
                jsonrpc_response_done(&resp);
                return EXIT_DAEMON_ERROR;
        }
        if (o->json)
                client_print_json(resp.result);
        else
                printf("config reloaded from %s%s\n", client_get_string(resp.result, "config_path", "?"),
                       client_get_bool(resp.result, "config_found") ? ""
                                                                    : " (not found: built-in defaults)");
        jsonrpc_response_done(&resp);
        return EXIT_OK;
}

int cmd_metrics(const struct client_options *o, int argc, char **argv)
{
        /* The exposition is a document of lines: the reply is taken unescaped and each line
         * escaped for the terminal, its line ends kept. */
        struct client_options whole = *o;
        struct jsonrpc_response resp;
        int r;

        if (client_no_args(argv[0], argc) < 0)
                return EXIT_DAEMON_ERROR;
        whole.json = true;
        r = client_call(&whole, argv[0], NULL, &resp);
        if (r < 0)
                return -r;
        if (o->json)
                client_print_json(resp.result);
        else
                escape_term_document(stdout, client_get_string(resp.result, "text", ""));
        jsonrpc_response_done(&resp);
        return EXIT_OK;
}
