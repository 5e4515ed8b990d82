/* The config file: the input is written to a file and loaded as sparkd --check-config would,
 * every error formatted as it would be printed. */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/config/conf.h"
#include "fuzz.h"

static char dir[256], path[300];

/* The group database is the harness's: the host's NSS (systemd's userdb walks directories on
 * every lookup) would be most of the time of each run, and its answers the host's. */
struct group *getgrnam(const char *name)
{
        static const struct {
                const char *name;
                gid_t gid;
        } groups[] = { { "root", 0 }, { "sparkd", 990 }, { "sparkd-admin", 991 } };
        static char *no_members[] = { NULL };
        static struct group g;

        for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
                if (strcmp(name, groups[i].name) == 0) {
                        g = (struct group){ .gr_name = (char *)groups[i].name,
                                            .gr_passwd = (char *)"x",
                                            .gr_gid = groups[i].gid,
                                            .gr_mem = no_members };
                        return &g;
                }
        errno = 0;
        return NULL;
}

static void remove_dir(void)
{
        unlink(path);
        rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct sparkd_config *config = NULL;
        struct conf_errors errors = { 0 };
        FILE *f;

        if (!path[0]) {
                fuzz_tmpdir("conf", dir, sizeof(dir));
                snprintf(path, sizeof(path), "%s/sparkd.conf", dir);
                atexit(remove_dir);
        }
        f = fopen(path, "wb");
        if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
                abort();
        if (conf_load(path, true, &config, &errors) == 0 && conf_errors_has_error(&errors))
                abort(); /* a config with errors is never handed out */
        for (size_t i = 0; i < errors.n; i++)
                free(conf_error_format(&errors.v[i]));
        conf_free(config);
        conf_errors_clear(&errors);
        return 0;
}
