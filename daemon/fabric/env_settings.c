/* Variables and where each came from: the caller's environment, NCCL's config files. */
#include "env_settings.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"

bool env_check_is_relevant(const char *name)
{
        static const char *const prefixes[] = { "NCCL_", "UCX_", "GLOO_", "OMPI_MCA_" };
        static const char *const names[] = { "VLLM_HOST_IP", "SGLANG_HOST_IP", "MASTER_ADDR", "RAY_ADDRESS",
                                             "DIST_INIT_ADDR" };

        for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++)
                if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
                        return true;
        for (size_t i = 0; i < ARRAY_SIZE(names); i++)
                if (strcmp(name, names[i]) == 0)
                        return true;
        return false;
}

int env_settings_add(struct env_settings *s, const char *name, const char *value, const char *source)
{
        struct env_setting *v = realloc(s->v, (s->n + 1) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        s->v = v;
        v[s->n] = (struct env_setting){ strdup(name), strdup(value), strdup(source) };
        if (!v[s->n].name || !v[s->n].value || !v[s->n].source) {
                free(v[s->n].name);
                free(v[s->n].value);
                free(v[s->n].source);
                return -ENOMEM;
        }
        s->n++;
        return 0;
}

void env_settings_free(struct env_settings *s)
{
        for (size_t i = 0; i < s->n; i++) {
                free(s->v[i].name);
                free(s->v[i].value);
                free(s->v[i].source);
        }
        free(s->v);
        *s = (struct env_settings){ 0 };
}

const struct env_setting *env_settings_find(const struct env_settings *s, const char *name)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->v[i].name, name) == 0)
                        return &s->v[i];
        return NULL;
}

/* NCCL's own reading (misc/param.cc, setEnvFile): the name is everything before the first '=',
 * the value everything after it, nothing trimmed. */
int env_check_parse_conf(const char *text, const char *path, struct env_settings *out)
{
        unsigned lineno = 0;

        for (const char *p = text; *p;) {
                const char *end = strchr(p, '\n'), *eq;
                size_t len = end ? (size_t)(end - p) : strlen(p);
                char name[ENV_CHECK_MAX_NAME], value[ENV_CHECK_MAX_VALUE], source[320];
                int r;

                if (++lineno > ENV_CHECK_MAX_FILE_LINES)
                        return -E2BIG;
                eq = memchr(p, '=', len);
                if (p[0] != '#' && eq && (size_t)(eq - p) < sizeof(name) &&
                    len - (size_t)(eq - p) - 1 < sizeof(value)) {
                        snprintf(name, sizeof(name), "%.*s", (int)(eq - p), p);
                        snprintf(value, sizeof(value), "%.*s", (int)(len - (size_t)(eq - p) - 1), eq + 1);
                        snprintf(source, sizeof(source), "%s:%u", path, lineno);
                        if (env_check_is_relevant(name) &&
                            (r = env_settings_add(out, name, value, source)) < 0)
                                return r;
                }
                p += len + (end ? 1 : 0);
        }
        return 0;
}
