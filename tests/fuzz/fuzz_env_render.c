/* env's output in every format and for every framework, its fields from outside: the mode's
 * reason, the notes, the head's name, address and why (what peers said), this node's address and
 * netdev, each variable's value and why. The input is a byte choosing the framework (or none),
 * then those fields, NUL-separated. Each output is
 * read back as its reader would: sh (only comments, blank lines and export NAME='...' of the
 * expected names, as many as there are variables), a docker env-file (comments and NAME=VALUE
 * lines, no control character) or a systemd drop-in (a [Service] line, comments no backslash
 * continues, Environment="NAME=VALUE" whose quotes, escapes and specifiers close). A failure
 * aborts. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/report.h"
#include "daemon/fabric/envgen_frameworks.h"
#include "fuzz.h"

#define MAX_FIELDS 24

/* What env may define: the base names this target uses and every framework's. */
static const char *const names[] = {
        "NCCL_SOCKET_IFNAME",
        "NCCL_IB_HCA",
        "OMPI_MCA_btl_tcp_if_include",
        "UCX_NET_DEVICES",
        "GLOO_SOCKET_IFNAME",
        "MASTER_ADDR",
        "MASTER_PORT",
        "NNODES",
        "NODE_RANK",
        "PET_MASTER_ADDR",
        "PET_MASTER_PORT",
        "PET_NNODES",
        "PET_NODE_RANK",
        "RAY_ADDRESS",
        "RAY_NODE_IP_ADDRESS",
        "VLLM_HOST_IP",
        "SGLANG_HOST_IP",
        "DIST_INIT_ADDR",
        "OMPI_MCA_oob_tcp_if_include",
};
#define BASE_NAMES 5

static void check(bool ok)
{
        if (!ok)
                abort();
}

/* The name at p up to stop, one of names[]; returns its end. */
static const char *expect_name(const char *p, char stop)
{
        const char *end = strchr(p, stop);

        check(end != NULL);
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strlen(names[i]) == (size_t)(end - p) && strncmp(names[i], p, (size_t)(end - p)) == 0)
                        return end;
        abort();
}

/* A comment line: no control character to its newline (tab aside), not continued by a backslash. */
static const char *expect_comment(const char *p)
{
        size_t backslashes = 0;

        check(*p == '#');
        for (; *p != '\n'; p++) {
                check(*p && ((unsigned char)*p >= 0x20 || *p == '\t') && *p != 0x7f);
                backslashes = *p == '\\' ? backslashes + 1 : 0;
        }
        check(backslashes % 2 == 0);
        return p + 1;
}

static void check_sh(const char *p, size_t variables)
{
        size_t exports = 0;

        while (*p) {
                if (*p == '\n') {
                        p++;
                        continue;
                }
                if (*p == '#') {
                        p = expect_comment(p);
                        continue;
                }
                check(strncmp(p, "export ", 7) == 0);
                p = expect_name(p + 7, '=') + 1;
                /* 'quoted' pieces joined by \' and nothing else, to the end of the line */
                for (;;) {
                        if (*p == '\'') {
                                const char *close = strchr(p + 1, '\'');

                                check(close != NULL);
                                p = close + 1;
                        } else if (p[0] == '\\' && p[1] == '\'') {
                                p += 2;
                        } else {
                                break;
                        }
                }
                check(*p == '\n');
                p++;
                exports++;
        }
        check(exports == variables);
}

static void check_docker(const char *p, size_t variables)
{
        size_t assignments = 0;

        while (*p) {
                if (*p == '#') {
                        p = expect_comment(p);
                        continue;
                }
                p = expect_name(p, '=') + 1;
                for (; *p != '\n'; p++)
                        check(*p && ((unsigned char)*p >= 0x20 || *p == '\t') && *p != 0x7f);
                p++;
                assignments++;
        }
        check(assignments == variables);
}

static void check_systemd(const char *p, size_t variables)
{
        size_t assignments = 0;

        check(strncmp(p, "[Service]\n", 10) == 0);
        p += 10;
        while (*p) {
                if (*p == '#') {
                        p = expect_comment(p);
                        continue;
                }
                check(strncmp(p, "Environment=\"", 13) == 0);
                p = expect_name(p + 13, '=') + 1;
                for (; *p != '"'; p++) {
                        check(*p && (unsigned char)*p >= 0x20 && *p != 0x7f && *p != '\n');
                        if (*p == '%') {
                                check(p[1] == '%');
                                p++;
                        } else if (*p == '\\') {
                                check(p[1] == '\\' || p[1] == '"' || p[1] == 'x');
                                p++;
                        }
                }
                check(p[1] == '\n');
                p += 2;
                assignments++;
        }
        check(assignments == variables);
}

static void render_and_check(json_object *env)
{
        static const enum env_format formats[] = { ENV_FORMAT_SH, ENV_FORMAT_DOCKER, ENV_FORMAT_SYSTEMD };
        static FILE *null;
        json_object *vars = json_object_object_get(env, "variables");

        if (!null)
                null = fopen("/dev/null", "w");
        check(null != NULL);
        for (size_t i = 0; i < 3; i++) {
                char *text = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&text, &size);
                int r;

                check(f != NULL);
                r = report_env(f, null, env, formats[i]);
                check(fclose(f) == 0);
                /* docker alone may refuse: its env-file cannot carry a control character */
                check(r == 0 || (r == -EINVAL && formats[i] == ENV_FORMAT_DOCKER));
                if (r == 0 && formats[i] == ENV_FORMAT_SH)
                        check_sh(text, json_object_array_length(vars));
                else if (r == 0 && formats[i] == ENV_FORMAT_DOCKER)
                        check_docker(text, json_object_array_length(vars));
                else if (r == 0)
                        check_systemd(text, json_object_array_length(vars));
                free(text);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *field[MAX_FIELDS] = { 0 };
        size_t n = 0;
        char *text;

        int framework;

        if (size < 1 || size > 8192)
                return 0;
        framework = data[0] % (ENV_FRAMEWORK_MPI + 2) - 1; /* -1: plain env */
        data++, size--;
        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        for (char *p = text; n < MAX_FIELDS && p <= text + size; p += strlen(p) + 1)
                field[n++] = p;
        for (size_t i = n; i < MAX_FIELDS; i++)
                field[i] = "";
        {
                json_object *env = json_object_new_object(), *vars = json_object_new_array(),
                            *notes = json_object_new_array(), *plan = json_object_new_object(),
                            *head = json_object_new_object(), *self = json_object_new_object();

                json_object_object_add(env, "fabric_found", json_object_new_boolean(true));
                json_object_object_add(env, "mode", json_object_new_string(field[0]));
                json_object_object_add(env, "mode_reason", json_object_new_string(field[1]));
                json_object_array_add(notes, json_object_new_string(field[2]));
                json_object_object_add(env, "notes", notes);
                for (size_t i = 0; i < BASE_NAMES; i++) {
                        json_object *v = json_object_new_object();

                        json_object_object_add(v, "name", json_object_new_string(names[i]));
                        json_object_object_add(v, "value", json_object_new_string(field[8 + 2 * i]));
                        json_object_object_add(v, "why", json_object_new_string(field[9 + 2 * i]));
                        json_object_array_add(vars, v);
                }
                json_object_object_add(env, "variables", vars);
                json_object_object_add(head, "name", json_object_new_string(field[3]));
                json_object_object_add(head, "address", json_object_new_string(field[4]));
                json_object_object_add(head, "why", json_object_new_string(field[5]));
                json_object_object_add(plan, "head", head);
                json_object_object_add(plan, "rank", json_object_new_int(0));
                json_object_object_add(plan, "size", json_object_new_int(2));
                json_object_object_add(plan, "digest", json_object_new_string("0123456789abcdef"));
                /* Both planes: on the management one the bootstrap is pinned to this node's netdev. */
                json_object_object_add(plan, "plane",
                                       json_object_new_string(field[0][0] & 1 ? "management" : "fabric"));
                json_object_object_add(self, "address", json_object_new_string(field[6]));
                json_object_object_add(self, "ifname", json_object_new_string(field[7]));
                json_object_object_add(plan, "self", self);
                if (framework >= 0)
                        (void)envgen_add_framework(env, (enum env_framework)framework, plan);
                render_and_check(env);
                json_object_put(plan);
                json_object_put(env);
        }
        free(text);
        return 0;
}
