#include "conf_lists.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "inventory/port_counters.h"
#include "probe_kinds.h"

int conf_parse_static_peers(struct conf_parse *p, const char *value, const char **why)
{
        char **peers = NULL;
        int r = strv_split(value, &peers);

        if (r < 0)
                return r;
        *why = "IPv4 addresses or host names separated by spaces";
        for (char **s = peers; *s; s++) {
                if (strlen(*s) > 253 ||
                    strspn(*s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") !=
                            strlen(*s)) {
                        strv_free(peers);
                        return -EINVAL;
                }
        }
        /* Repeated in one file, the lists add up (one peer a line); a later file replaces them. */
        if (p->static_peers_file == p->file_index && peers[0]) {
                for (char **s = peers; *s && r == 0; s++)
                        r = strv_push(&p->config->static_peers, *s);
                strv_free(peers);
                return r;
        }
        strv_free(p->config->static_peers);
        p->config->static_peers = peers;
        p->static_peers_file = p->file_index;
        return 0;
}

int conf_parse_probe_kinds(struct conf_parse *p, const char *value, const char **why)
{
        static char what[224];
        char **kinds = NULL, names[96];
        int r = strv_split(value, &kinds);

        if (r < 0)
                return r;
        probe_kind_names(names, sizeof(names));
        /* Static: *why outlives this call. The list is the table's, so it changes only between builds. */
        snprintf(what, sizeof(what),
                 "bandwidth probe kinds separated by spaces, of those this sparkd has (%s), "
                 "each once; rtt has its own rtt_interval",
                 names);
        *why = what;
        for (char **k = kinds; *k; k++) {
                const struct probe_kind *kind = probe_kind_find(*k);

                if (!kind || !kind->is_bandwidth || strv_contains(k + 1, *k)) {
                        strv_free(kinds);
                        return -EINVAL;
                }
        }
        strv_free(p->config->probe_kinds);
        p->config->probe_kinds = kinds;
        return 0;
}

int conf_parse_rdma_twins(struct conf_parse *p, const char *value, const char **why)
{
        _cleanup_strv_ char **names = NULL;
        int r = strv_split(value, &names);

        if (r < 0)
                return r;
        *why = "two different RDMA devices of one port separated by a space, such as rocep1s0f1 "
               "roceP2p1s0f1 (names of 1 to 63 characters)";
        if (strv_length(names) != 2 || strcmp(names[0], names[1]) == 0 || strlen(names[0]) > 63 ||
            strlen(names[1]) > 63)
                return -EINVAL;
        snprintf(p->config->probe_rdma_twins, sizeof(p->config->probe_rdma_twins), "%s,%s", names[0],
                 names[1]);
        return 0;
}

int conf_parse_counters_fatal(struct conf_parse *p, const char *value, const char **why)
{
        char **names = NULL;
        int r = strv_split(value, &names);

        if (r < 0)
                return r;
        *why = "port counter names separated by spaces, such as " CONF_COUNTERS_FATAL_DEFAULT
               " (sparkd.conf(5) lists them)";
        for (char **name = names; *name; name++) {
                enum port_counter counter;

                if (port_counter_from_name(*name, &counter) < 0 || port_counter_is_traffic(counter)) {
                        strv_free(names);
                        return -EINVAL;
                }
        }
        strv_free(p->config->counters_fatal);
        p->config->counters_fatal = names;
        return 0;
}
