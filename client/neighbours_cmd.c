/* sparkc neighbours: what is at the other end of each fabric port (lldpd's neighbour, or the
 * peer on the port's subnet without lldpd), as `lldpcli show neighbors` would name it. */
#include "commands.h"

#include <stdio.h>

#include "client.h"

/* "200G", "10G", "1000M", "-" for unknown. */
static void format_speed(json_object *o, char *buf, size_t size)
{
        json_object *v = NULL;
        int64_t mbps = json_object_object_get_ex(o, "speed_mbps", &v) && v ? json_object_get_int64(v) : -1;

        if (mbps <= 0)
                snprintf(buf, size, "-");
        else if (mbps % 1000 == 0)
                snprintf(buf, size, "%lldG", (long long)(mbps / 1000));
        else
                snprintf(buf, size, "%lldM", (long long)mbps);
}

static void show_neighbours(json_object *result)
{
        json_object *chassis = NULL, *ports = NULL;
        const char *lldpd = client_get_string(result, "lldpd", "?");

        json_object_object_get_ex(result, "chassis", &chassis);
        json_object_object_get_ex(result, "ports", &ports);
        if (chassis)
                printf("lldpd %s, this node's chassis %s (%s)\n\n", lldpd,
                       client_get_string(chassis, "id", "?"), client_get_string(chassis, "name", "?"));
        else
                printf("lldpd %s: neighbours from the peer channel only (see sparkc doctor --check "
                       "lldpd)\n%s%s\n",
                       lldpd, client_get_string(result, "lldpd_detail", ""),
                       client_get_string(result, "lldpd_detail", NULL) ? "\n" : "");
        if (!ports || json_object_array_length(ports) == 0) {
                printf("no fabric ports\n");
                return;
        }
        /* OPER fits the longest operstate (lowerlayerdown); NODE is a node id's first 8 digits, or
         * "not sparkd" whole. */
        printf("%-16s %-4s %-6s %-14s %-26s %-20s %-6s %-6s %s\n", "PORT", "RAIL", "SPEED", "OPER",
               "FAR END", "FAR PORT", "SPEED", "SOURCE", "NODE");
        for (size_t i = 0; i < json_object_array_length(ports); i++) {
                json_object *p = json_object_array_get_idx(ports, i), *nb = NULL;
                char speed[24], far_speed[24] = "-";
                const char *node = NULL;

                json_object_object_get_ex(p, "neighbour", &nb);
                format_speed(p, speed, sizeof(speed));
                if (nb) {
                        format_speed(nb, far_speed, sizeof(far_speed));
                        node = client_get_string(nb, "node_id", NULL);
                }
                printf("%-16s %-4d %-6s %-14s %-26s %-20s %-6s %-6s %.*s%s\n",
                       client_get_string(p, "netdev", "?"), client_get_int(p, "rail"), speed,
                       client_get_string(p, "oper", "?"), nb ? client_get_string(nb, "sysname", "?") : "-",
                       nb ? client_get_string(nb, "port_descr", client_get_string(nb, "port_id", "?")) : "-",
                       far_speed, nb ? client_get_string(nb, "source", "?") : "-", node ? 8 : 16,
                       node ? node
                       : nb ? "not sparkd"
                            : "-",
                       nb && client_get_bool(nb, "is_bridge") ? " (bridge)" : "");
        }
}

int cmd_neighbours(const struct client_options *o, int argc, char **argv)
{
        return client_show(o, argc, argv, show_neighbours);
}
