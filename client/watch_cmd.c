/* sparkc watch: the daemon's events as they happen. */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "common/jsonrpc.h"
#include "common/text_escape.h"
#include "rpc.h"

static void print_event(json_object *ev)
{
        json_object *fields;

        printf("%s  %-18s %s", client_get_string(ev, "time", "?"), client_get_string(ev, "event", "?"),
               client_get_string(ev, "message", ""));
        if (json_object_object_get_ex(ev, "fields", &fields) &&
            json_object_is_type(fields, json_type_object)) {
                json_object_object_foreach(fields, key, val)
                        printf(" %s=%s", key, json_object_get_string(val));
        }
        printf("\n");
}

int cmd_watch(const struct client_options *o, int argc, char **argv)
{
        struct rpc_client *c = NULL;
        struct jsonrpc_response resp;
        json_object *params = NULL;
        int r;

        if (argc > 1) {
                json_object *types = json_object_new_array();

                for (int i = 1; i < argc; i++)
                        json_object_array_add(types, json_object_new_string(argv[i]));
                params = json_object_new_object();
                json_object_object_add(params, "events", types);
        }
        r = client_call_keep(o, "subscribe", params, &resp, &c);
        if (r == -EXIT_DAEMON_ERROR && argc > 1)
                /* The daemon named the events it has; how to ask for them is ours to say. */
                fprintf(stderr, "usage: sparkc watch [EVENT]... (one or more of the events above; none: "
                                "every event)\n");
        if (r < 0)
                return -r;
        jsonrpc_response_done(&resp);
        /* On stderr even with --json: scripts wait for this line to know the stream is live. */
        fprintf(stderr, "watching sparkd at %s; Ctrl-C stops\n", o->socket_path);
        for (;;) {
                r = rpc_read_message(c, -1, &resp);
                if (r < 0)
                        break;
                if (resp.method && strcmp(resp.method, "event") == 0 && resp.params) {
                        if (o->json)
                                printf("%s\n", json_object_to_json_string_ext(
                                                       resp.params, JSON_C_TO_STRING_PLAIN |
                                                                            JSON_C_TO_STRING_NOSLASHESCAPE));
                        else if (escape_term_json(resp.params) == 0)
                                print_event(resp.params);
                        fflush(stdout);
                }
                jsonrpc_response_done(&resp);
        }
        rpc_close(c);
        if (r == -EINTR)
                return EXIT_OK;
        fprintf(stderr, "sparkc: watch: sparkd at %s went away: %s\n", o->socket_path,
                r == -ECONNRESET ? "connection closed" : strerror(-r));
        return EXIT_UNREACHABLE;
}
