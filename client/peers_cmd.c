/* sparkc peers: the other nodes, how each is reached, the MTU at both ends. */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "common/jsonrpc.h"

static void show_peers(json_object *result)
{
        json_object *list = NULL;

        const char *off_reason = client_get_string(result, "off_reason", NULL);

        if (client_get_bool(result, "peering") || !off_reason)
                printf("peering %s, key %s, port %d, mDNS %s\n\n",
                       client_get_bool(result, "peering") ? "on" : "OFF",
                       client_get_string(result, "key_id", "none"), client_get_int(result, "port"),
                       client_get_string(result, "mdns", "?"));
        else
                printf("peering OFF: %s\n\n", off_reason);
        json_object_object_get_ex(result, "peers", &list);
        if (!list || json_object_array_length(list) == 0) {
                printf("no peers: none found over mDNS and none in [peers] static\n");
        } else {
                printf("%-16s %-12s %-20s %-14s %-16s %-16s %-11s %s\n", "PEER", "STATE", "SINCE", "VIA",
                       "LOCAL", "REMOTE", "MTU HERE/PEER", "NOTE");
        }
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i), *via = NULL, *mtu = NULL, *addrs = NULL;
                char mtu_s[32] = "-", state[32];
                const char *name = client_get_string(p, "name", NULL);

                json_object_object_get_ex(p, "via", &via);
                json_object_object_get_ex(p, "mtu", &mtu);
                json_object_object_get_ex(p, "addresses", &addrs);
                if (!name)
                        name = client_get_string(p, "static", NULL);
                if (!name && addrs && json_object_array_length(addrs) > 0)
                        name = json_object_get_string(json_object_array_get_idx(addrs, 0));
                if (mtu && client_get_int(mtu, "local") && client_get_int(mtu, "peer"))
                        snprintf(mtu_s, sizeof(mtu_s), "%d/%d%s", client_get_int(mtu, "local"),
                                 client_get_int(mtu, "peer"),
                                 client_get_bool(mtu, "mismatch") ? " MISMATCH" : "");
                /* Up but silent: stopped or starved of CPU there, not gone (its host acknowledges). */
                if (client_get_bool(p, "slow"))
                        snprintf(state, sizeof(state), "slow %.1fs",
                                 (double)client_get_int(p, "silent_ms") / 1000.0);
                else
                        snprintf(state, sizeof(state), "%s", client_get_string(p, "state", "?"));
                printf("%-16s %-12s %-20s %-14s %-16s %-16s %-11s %s\n", name ? name : "?", state,
                       client_get_string(p, "since", "?"), via ? client_get_string(via, "iface", "-") : "-",
                       via ? client_get_string(via, "local", "-") : "-",
                       via ? client_get_string(via, "remote", "-") : "-", mtu_s,
                       client_get_string(p, "error", ""));
        }
}

int cmd_peers(const struct client_options *o, int argc, char **argv)
{
        return client_show(o, argc, argv, show_peers);
}
