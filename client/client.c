/* What sparkc's commands share: calling the daemon and saying why it failed, reading results. */
#include "client.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/json_get.h"
#include "common/jsonrpc.h"
#include "common/macro.h"
#include "common/proto.h"
#include "common/text_escape.h"
#include "rpc.h"

volatile sig_atomic_t client_interrupted;

int client_connect(const struct client_options *o, struct rpc_client **c)
{
        int r = rpc_connect(o->socket_path, o->timeout_ms, c);
        char audience[160];

        if (r < 0) {
                fprintf(stderr, "sparkc: cannot reach sparkd at %s: %s\n", o->socket_path, strerror(-r));
                if (r == -ENOENT || r == -ECONNREFUSED)
                        fprintf(stderr,
                                "sparkc: is sparkd running? (systemctl status sparkd; or use --socket or "
                                "$%s)\n",
                                SPARKD_SOCKET_ENV);
                else if (r == -EACCES &&
                         rpc_socket_audience(o->socket_path, audience, sizeof(audience)) == 0)
                        fprintf(stderr,
                                "sparkc: the socket is for %s (socket_mode and socket_group in sparkd's "
                                "config)\n",
                                audience);
                else if (r == -EACCES)
                        fprintf(stderr, "sparkc: the socket is for root and the group socket_group names in "
                                        "sparkd's config\n");
                return -EXIT_UNREACHABLE;
        }
        return 0;
}

/* The daemon's error for method: its message already names the method and, for bad
 * parameters, what they must be; the code adds nothing there. */
static void client_print_error(const char *method, const struct jsonrpc_response *resp)
{
        const char *message = resp->error_message;
        size_t n = strlen(method);

        if (strncmp(message, method, n) == 0 && strncmp(message + n, ": ", 2) == 0)
                message += n + 2;
        fprintf(stderr, "sparkc: %s: ", method);
        escape_term(stderr, message);
        if (resp->error_code == RPC_INVALID_PARAMS)
                fputc('\n', stderr);
        else
                fprintf(stderr, " (error %d)\n", resp->error_code);
}

/* Calls one method. Returns 0 with the response, or -EXIT_* after saying what went wrong. */
int client_call_keep(const struct client_options *o, const char *method, json_object *params,
                     struct jsonrpc_response *resp, struct rpc_client **keep)
{
        struct rpc_client *c = NULL;
        int r;

        r = client_connect(o, &c);
        if (r < 0) {
                json_object_put(params);
                return r;
        }
        r = rpc_call(c, method, params, resp);
        if (r < 0) {
                if (r == -ETIMEDOUT)
                        fprintf(stderr, "sparkc: sparkd at %s did not answer %s within %d s\n",
                                o->socket_path, method, o->timeout_ms / 1000);
                else if (r == -EMSGSIZE)
                        fprintf(stderr,
                                "sparkc: %s: the answer of sparkd at %s is over the %d MiB sparkc reads\n",
                                method, o->socket_path, SPARKD_MAX_REPLY >> 20);
                else
                        fprintf(stderr, "sparkc: %s: lost the connection to sparkd at %s: %s\n", method,
                                o->socket_path, strerror(-r));
                rpc_close(c);
                return -EXIT_UNREACHABLE;
        }
        if (resp->error_message) {
                client_print_error(method, resp);
                jsonrpc_response_done(resp);
                rpc_close(c);
                return -EXIT_DAEMON_ERROR;
        }
        /* Shown as text, every string of the reply is escaped for the terminal here, once: a
         * peer's or a switch's bytes never reach it as they came. --json output is JSON's own
         * escaping. */
        if (!o->json && escape_term_json(resp->result) < 0) {
                jsonrpc_response_done(resp);
                rpc_close(c);
                return -EXIT_DAEMON_ERROR;
        }
        if (keep)
                *keep = c;
        else
                rpc_close(c);
        return 0;
}

void client_print_json(json_object *obj)
{
        /* The same text on every distribution, whichever json-c it has (json-c's own when there
         * is no memory for that). */
        const int flags = JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE;
        _cleanup_free_ char *text = json_pretty_text(obj, flags);

        printf("%s\n", text ? text : json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY | flags));
}

const char *client_get_string(json_object *obj, const char *key, const char *fallback)
{
        json_object *v;

        if (json_object_object_get_ex(obj, key, &v) && json_object_is_type(v, json_type_string))
                return json_object_get_string(v);
        return fallback;
}

bool client_get_bool(json_object *obj, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(obj, key, &v) && json_object_get_boolean(v);
}

double client_get_double(json_object *obj, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(obj, key, &v) ? json_object_get_double(v) : 0.0;
}

int client_get_int(json_object *obj, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(obj, key, &v) ? json_object_get_int(v) : 0;
}

int client_no_args(const char *name, int argc)
{
        if (argc > 1) {
                fprintf(stderr, "sparkc: %s takes no arguments\n", name);
                return -EINVAL;
        }
        return 0;
}

int client_call(const struct client_options *o, const char *method, json_object *params,
                struct jsonrpc_response *resp)
{
        return client_call_keep(o, method, params, resp, NULL);
}

int client_show(const struct client_options *o, int argc, char **argv, void (*show)(json_object *result))
{
        struct jsonrpc_response resp;
        int r;

        if (client_no_args(argv[0], argc) < 0)
                return EXIT_DAEMON_ERROR;
        r = client_call(o, argv[0], NULL, &resp);
        if (r < 0)
                return -r;
        if (o->json)
                client_print_json(resp.result);
        else
                show(resp.result);
        jsonrpc_response_done(&resp);
        return EXIT_OK;
}
