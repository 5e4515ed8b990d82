/* sparkc keygen: a new cluster key, written here without asking the daemon. */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "common/cluster_key.h"

const struct command_options keygen_options = {
        .long_options =
                (const struct option[]){
                        { "force", no_argument, NULL, 'f' },
                        {},
                },
};

int cmd_keygen(const struct client_options *o, int argc, char **argv)
{
        const char *path = CLUSTER_KEY_PATH;
        struct cluster_key key;
        bool force = false;
        int r;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--force") == 0)
                        force = true;
                else if (argv[i][0] != '-')
                        path = argv[i];
                else {
                        fprintf(stderr, "usage: sparkc keygen [--force] [FILE]\n");
                        return EXIT_DAEMON_ERROR;
                }
        }
        r = cluster_key_generate(path, force, &key);
        if (r == -EEXIST) {
                fprintf(stderr,
                        "sparkc: keygen: %s exists; every node needs the same key, so copy that one "
                        "(--force replaces it and cuts this node off until the others have the new one)\n",
                        path);
                return EXIT_DAEMON_ERROR;
        }
        if (r < 0) {
                fprintf(stderr, "sparkc: keygen: cannot write %s: %s\n", path, strerror(-r));
                return EXIT_DAEMON_ERROR;
        }
        printf("wrote a new cluster key to %s (id %s); copy it to every node (mode 600) and reload sparkd\n",
               path, key.id);
        return EXIT_OK;
}
