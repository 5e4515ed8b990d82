/* sparkc links: the fabric interfaces as the daemon keeps them, and its sysctls. */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "common/jsonrpc.h"

/* "9.41/0.02": received and sent Gb/s; "-" where the daemon has no byte counters. */
static const char *throughput(json_object *l, const char *rx, const char *tx, char *buf, size_t size)
{
        json_object *t = NULL, *v;
        double rx_gbps = 0, tx_gbps = 0;

        if (!json_object_object_get_ex(l, "throughput", &t) || !t) {
                snprintf(buf, size, "-");
                return buf;
        }
        if (json_object_object_get_ex(t, rx, &v))
                rx_gbps = json_object_get_double(v);
        if (json_object_object_get_ex(t, tx, &v))
                tx_gbps = json_object_get_double(v);
        snprintf(buf, size, "%.2f/%.2f", rx_gbps, tx_gbps);
        return buf;
}

static void print_link_row(json_object *l)
{
        char now[32], peak[32];
        json_object *drift = NULL, *addrs = NULL;
        char mtu[32], speed[32], state[48], notes[256] = "";
        json_object *v;
        int64_t mbps = 0;
        size_t used = 0;

        if (json_object_object_get_ex(l, "mtu_wanted", &v) && v)
                snprintf(mtu, sizeof(mtu), "%d/%d", client_get_int(l, "mtu"), json_object_get_int(v));
        else
                snprintf(mtu, sizeof(mtu), "%d/-", client_get_int(l, "mtu"));
        if (json_object_object_get_ex(l, "speed_mbps", &v) && v)
                mbps = json_object_get_int64(v);
        if (mbps >= 1000)
                snprintf(speed, sizeof(speed), "%lldG", (long long)(mbps / 1000));
        else if (mbps > 0)
                snprintf(speed, sizeof(speed), "%lldM", (long long)mbps);
        else
                snprintf(speed, sizeof(speed), "-");
        snprintf(state, sizeof(state), "%s%s",
                 client_get_bool(l, "admin_up") ? client_get_string(l, "operstate", "?") : "admin-down",
                 client_get_bool(l, "flapping") ? ",flapping" : "");
        if (json_object_object_get_ex(l, "drift", &drift) && json_object_array_length(drift) > 0) {
                used += (size_t)snprintf(notes + used, sizeof(notes) - used, "drift:");
                for (size_t i = 0; i < json_object_array_length(drift) && used < sizeof(notes); i++)
                        used += (size_t)snprintf(
                                notes + used, sizeof(notes) - used, " %s",
                                json_object_get_string(json_object_array_get_idx(drift, i)));
        }
        if (client_get_bool(l, "keep_down") && used < sizeof(notes))
                used += (size_t)snprintf(notes + used, sizeof(notes) - used, "%skept down",
                                         used ? "; " : "");
        if (json_object_object_get_ex(l, "addresses", &addrs) && json_object_array_length(addrs) > 0 &&
            used < sizeof(notes))
                used += (size_t)snprintf(notes + used, sizeof(notes) - used, "%s%s", used ? "; " : "",
                                         json_object_get_string(json_object_array_get_idx(addrs, 0)));
        printf("%-16s %-16s %-23s %-11s %-6s %6d %6d  %-13s %-13s %-20s %s\n",
               client_get_string(l, "name", "?"), client_get_string(l, "twin", "-"), state, mtu, speed,
               client_get_int(l, "flaps"), client_get_int(l, "corrections"),
               throughput(l, "rx_gbps", "tx_gbps", now, sizeof(now)),
               throughput(l, "peak_rx_gbps", "peak_tx_gbps", peak, sizeof(peak)),
               client_get_string(l, "last_change", "-"), notes);
}

static void show_links(json_object *result)
{
        json_object *links = NULL, *sysctls = NULL;

        printf("mode %s\n\n", client_get_string(result, "mode", "?"));
        json_object_object_get_ex(result, "links", &links);
        if (!links || json_object_array_length(links) == 0) {
                printf("no fabric interfaces: no netdev is backed by an RDMA device and [fabric] interfaces "
                       "names "
                       "none\n");
        } else {
                /* STATE fits the longest: "lowerlayerdown,flapping". */
                printf("%-16s %-16s %-23s %-11s %-6s %6s %6s  %-13s %-13s %-20s %s\n", "IFACE", "TWIN",
                       "STATE", "MTU NOW/WANT", "SPEED", "FLAPS", "FIXES", "GB/S RX/TX", "PEAK RX/TX",
                       "LAST CHANGE", "NOTES");
                for (size_t i = 0; i < json_object_array_length(links); i++)
                        print_link_row(json_object_array_get_idx(links, i));
        }
        json_object_object_get_ex(result, "sysctls", &sysctls);
        if (sysctls && json_object_array_length(sysctls) > 0) {
                printf("\n%-32s %-24s %-24s %-10s %s\n", "SYSCTL", "NOW", "WANT", "STATE", "FIXES");
                for (size_t i = 0; i < json_object_array_length(sysctls); i++) {
                        json_object *s = json_object_array_get_idx(sysctls, i);

                        printf("%-32s %-24s %-24s %-10s %d\n", client_get_string(s, "name", "?"),
                               client_get_string(s, "actual", "?"), client_get_string(s, "wanted", "?"),
                               client_get_string(s, "state", "?"), client_get_int(s, "corrections"));
                }
        }
}

int cmd_links(const struct client_options *o, int argc, char **argv)
{
        return client_show(o, argc, argv, show_links);
}
