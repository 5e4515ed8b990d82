/* env-check's input from outside: the text of an NCCL config file (the caller sends its own) read
 * as NCCL reads it, and the same NAME=VALUE lines as the caller's environment, judged against a
 * fixture Spark: every judge meets arbitrary values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/fabric/env_check.h"
#include "fuzz.h"

static struct fabric_facts facts;
static bool loaded;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct env_check_input in = { .has_memlock = true,
                                      .memlock_soft = 64 * 1024,
                                      .memlock_hard = 1 << 30 };
        char *text;

        if (!loaded) {
                char root[512], addresses[600];

                snprintf(root, sizeof(root), "%s/spark-twins", FIXTURES_DIR);
                snprintf(addresses, sizeof(addresses), "%s/addresses", root);
                if (fabric_facts_read(root, NULL, false, &facts) < 0 ||
                    fabric_facts_load_addresses(&facts, addresses) < 0)
                        abort();
                loaded = true;
        }
        if (size > ENV_CHECK_MAX_FILE_BYTES)
                return 0;
        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (env_check_parse_conf(text, "/etc/nccl.conf", &in.files) == 0) {
                for (size_t i = 0; i < in.files.n; i++)
                        (void)env_settings_add(&in.environ, in.files.v[i].name, in.files.v[i].value,
                                               "environment");
                json_object_put(env_check_run(&facts, &in));
                /* The files alone: each line is then what NCCL sees. */
                env_settings_free(&in.environ);
                json_object_put(env_check_run(&facts, &in));
        }
        env_settings_free(&in.environ);
        env_settings_free(&in.files);
        free(text);
        return 0;
}
