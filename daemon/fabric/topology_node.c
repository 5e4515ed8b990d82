/* One node's "neighbours" section, parsed and bounded into the engine's model: every string
 * checked for type and length, netdev names checked (text_check.h), the LLDP text a switch or
 * another host sent cleaned and cut rather than refused, ports sorted by netdev so that the map
 * never depends on the order a table listed them in. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/text_check.h"
#include "topology_model.h"

/* Copies o[key] (a string, or null/absent when is_optional) into buf; -EINVAL with why. */
static int get_string(json_object *o, const char *where, const char *key, bool is_optional, char *buf,
                      size_t size, char *why, size_t why_size)
{
        json_object *v = NULL;
        const char *s;

        buf[0] = '\0';
        if (!json_object_object_get_ex(o, key, &v) || !v) {
                if (is_optional)
                        return 0;
                snprintf(why, why_size, "%s: \"%s\" missing, expected a string", where, key);
                return -EINVAL;
        }
        if (!json_object_is_type(v, json_type_string)) {
                snprintf(why, why_size, "%s: \"%s\" is %s, expected a string", where, key,
                         json_type_to_name(json_object_get_type(v)));
                return -EINVAL;
        }
        s = json_object_get_string(v);
        if (strlen(s) >= size) {
                snprintf(why, why_size, "%s: \"%s\" is %zu bytes long, the limit is %zu", where, key,
                         strlen(s), size - 1);
                return -EINVAL;
        }
        if (!text_is_clean(s, size)) {
                snprintf(why, why_size, "%s: \"%s\" holds a control character", where, key);
                return -EINVAL;
        }
        memcpy(buf, s, strlen(s) + 1);
        return 0;
}

/* Free text at o[key] (a string, or null/absent): cleaned and cut to size (text_clean), never
 * refused for its bytes or its length; -EINVAL with why when it is not a string. */
static int get_text(json_object *o, const char *where, const char *key, char *buf, size_t size, char *why,
                    size_t why_size)
{
        json_object *v = NULL;

        buf[0] = '\0';
        if (!json_object_object_get_ex(o, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_string)) {
                snprintf(why, why_size, "%s: \"%s\" is %s, expected a string", where, key,
                         json_type_to_name(json_object_get_type(v)));
                return -EINVAL;
        }
        text_clean(buf, size, json_object_get_string(v), (size_t)json_object_get_string_len(v));
        return 0;
}

/* A netdev name at o[key] (or "" when is_optional and absent); -EINVAL with why. */
static int get_netdev(json_object *o, const char *where, const char *key, bool is_optional, char *buf,
                      size_t size, char *why, size_t why_size)
{
        int r = get_string(o, where, key, is_optional, buf, size, why, why_size);

        if (r < 0 || (is_optional && !buf[0]) || text_is_netdev_name(buf))
                return r;
        snprintf(why, why_size, "%s: \"%s\" is not a netdev name (1 to %d letters, digits, '-', '_' or '.')",
                 where, key, TEXT_NETDEV_NAME_MAX);
        buf[0] = '\0';
        return -EINVAL;
}

/* o[key] as an int in [min, max], fallback when absent or null; -EINVAL with why. */
static int get_int(json_object *o, const char *where, const char *key, int min, int max, int fallback,
                   int *out, char *why, size_t why_size)
{
        json_object *v = NULL;
        int64_t x;

        *out = fallback;
        if (!json_object_object_get_ex(o, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_int)) {
                snprintf(why, why_size, "%s: \"%s\" is %s, expected an integer", where, key,
                         json_type_to_name(json_object_get_type(v)));
                return -EINVAL;
        }
        x = json_object_get_int64(v);
        if (x < min || x > max) {
                snprintf(why, why_size, "%s: \"%s\" is %lld, expected %d to %d", where, key, (long long)x,
                         min, max);
                return -EINVAL;
        }
        *out = (int)x;
        return 0;
}

static int parse_neighbour(json_object *o, const char *where, struct topology_neighbour *nb, char *why,
                           size_t why_size)
{
        json_object *v;
        int r;

        if (!json_object_is_type(o, json_type_object)) {
                snprintf(why, why_size, "%s: expected an object or null", where);
                return -EINVAL;
        }
        if ((r = get_string(o, where, "source", true, nb->source, sizeof(nb->source), why, why_size)) < 0 ||
            (r = get_text(o, where, "chassis_id", nb->chassis_id, sizeof(nb->chassis_id), why, why_size)) <
                    0 ||
            (r = get_text(o, where, "sysname", nb->sysname, sizeof(nb->sysname), why, why_size)) < 0 ||
            (r = get_text(o, where, "port_id", nb->port_id, sizeof(nb->port_id), why, why_size)) < 0 ||
            (r = get_text(o, where, "port_id_subtype", nb->port_id_subtype, sizeof(nb->port_id_subtype), why,
                          why_size)) < 0 ||
            (r = get_text(o, where, "port_descr", nb->port_descr, sizeof(nb->port_descr), why, why_size)) <
                    0 ||
            (r = get_string(o, where, "node_id", true, nb->node_id, sizeof(nb->node_id), why, why_size)) <
                    0 ||
            (r = get_int(o, where, "speed_mbps", -1, 10000000, -1, &nb->speed_mbps, why, why_size)) < 0)
                return r;
        nb->is_bridge = json_object_object_get_ex(o, "is_bridge", &v) && json_object_get_boolean(v);
        return 0;
}

static int parse_port(json_object *o, size_t index, struct topology_port *p, char *why, size_t why_size)
{
        json_object *addresses = NULL, *nb = NULL;
        char where[96];
        int r;

        snprintf(where, sizeof(where), "ports[%zu]", index);
        if (!json_object_is_type(o, json_type_object)) {
                snprintf(why, why_size, "%s: expected an object", where);
                return -EINVAL;
        }
        if ((r = get_netdev(o, where, "netdev", false, p->netdev, sizeof(p->netdev), why, why_size)) < 0 ||
            (r = get_string(o, where, "mac", true, p->mac, sizeof(p->mac), why, why_size)) < 0 ||
            (r = get_netdev(o, where, "twin", true, p->twin, sizeof(p->twin), why, why_size)) < 0 ||
            (r = get_string(o, where, "oper", true, p->oper, sizeof(p->oper), why, why_size)) < 0 ||
            (r = get_int(o, where, "rail", 0, TOPOLOGY_MAX_PORTS - 1, -1, &p->rail, why, why_size)) < 0 ||
            (r = get_int(o, where, "speed_mbps", -1, 10000000, -1, &p->speed_mbps, why, why_size)) < 0 ||
            (r = get_int(o, where, "mtu", 0, 65536, 0, &p->mtu, why, why_size)) < 0)
                return r;
        p->is_up = strcmp(p->oper, "up") == 0;
        if (json_object_object_get_ex(o, "addresses", &addresses) && addresses) {
                if (!json_object_is_type(addresses, json_type_array)) {
                        snprintf(why, why_size, "%s: \"addresses\" expected an array of strings", where);
                        return -EINVAL;
                }
                for (size_t i = 0; i < json_object_array_length(addresses); i++) {
                        json_object *a = json_object_array_get_idx(addresses, i);

                        if (!json_object_is_type(a, json_type_string) ||
                            !text_is_ip_prefix(json_object_get_string(a))) {
                                snprintf(why, why_size, "%s: addresses[%zu] expected \"ADDRESS/PREFIX\"",
                                         where, i);
                                return -EINVAL;
                        }
                        if (p->n_addresses < TOPOLOGY_MAX_ADDRESSES)
                                snprintf(p->addresses[p->n_addresses++], sizeof(p->addresses[0]), "%s",
                                         json_object_get_string(a));
                }
        }
        if (json_object_object_get_ex(o, "neighbour", &nb) && nb) {
                char nb_where[256];

                snprintf(nb_where, sizeof(nb_where), "%s (%s).neighbour", where, p->netdev);
                r = parse_neighbour(nb, nb_where, &p->neighbour, why, why_size);
                if (r < 0)
                        return r;
                p->has_neighbour = true;
        }
        return 0;
}

static int compare_ports(const void *x, const void *y)
{
        return strcmp(((const struct topology_port *)x)->netdev, ((const struct topology_port *)y)->netdev);
}

int topology_node_parse(const char *node_id, const char *name, json_object *neighbours,
                        struct topology_node **ret, char *why, size_t why_size)
{
        _cleanup_free_ struct topology_node *n = NULL;
        json_object *ports = NULL, *chassis = NULL;
        size_t count;
        int r;

        if (!node_id || !node_id[0] || strlen(node_id) >= TOPOLOGY_ID_MAX || !name ||
            strlen(name) >= TOPOLOGY_NAME_MAX) {
                snprintf(why, why_size, "node id \"%s\" or name \"%s\" empty or longer than %d bytes",
                         node_id ? node_id : "", name ? name : "", TOPOLOGY_ID_MAX - 1);
                return -EINVAL;
        }
        if (!json_object_is_type(neighbours, json_type_object)) {
                snprintf(why, why_size, "%s: the neighbours section is not an object", name);
                return -EINVAL;
        }
        if (!json_object_object_get_ex(neighbours, "ports", &ports) ||
            !json_object_is_type(ports, json_type_array)) {
                snprintf(why, why_size, "%s: \"ports\" missing or not an array", name);
                return -EINVAL;
        }
        count = json_object_array_length(ports);
        if (count > TOPOLOGY_MAX_PORTS) {
                snprintf(why, why_size, "%s: %zu ports, the limit is %d", name, count, TOPOLOGY_MAX_PORTS);
                return -E2BIG;
        }
        n = calloc(1, sizeof(*n) + count * sizeof(n->ports[0]));
        if (!n)
                return -ENOMEM;
        snprintf(n->node_id, sizeof(n->node_id), "%s", node_id);
        snprintf(n->name, sizeof(n->name), "%s", name);
        r = get_text(neighbours, "neighbours", "lldpd", n->lldpd, sizeof(n->lldpd), why, why_size);
        if (r < 0)
                return r;
        if (json_object_object_get_ex(neighbours, "chassis", &chassis) && chassis) {
                if ((r = get_text(chassis, "chassis", "id", n->chassis_id, sizeof(n->chassis_id), why,
                                  why_size)) < 0 ||
                    (r = get_text(chassis, "chassis", "name", n->chassis_name, sizeof(n->chassis_name), why,
                                  why_size)) < 0)
                        return r;
        }
        for (size_t i = 0; i < count; i++) {
                r = parse_port(json_object_array_get_idx(ports, i), i, &n->ports[i], why, why_size);
                if (r < 0)
                        return r;
                for (size_t j = 0; j < i; j++)
                        if (strcmp(n->ports[j].netdev, n->ports[i].netdev) == 0) {
                                snprintf(why, why_size, "%s: port %s listed twice", name,
                                         n->ports[i].netdev);
                                return -EINVAL;
                        }
        }
        n->n_ports = count;
        qsort(n->ports, n->n_ports, sizeof(n->ports[0]), compare_ports);
        /* Without a rail each netdev is a port of its own, numbered in name order (as the
         * neighbours section does without PCI), never in the order the table listed them. */
        for (size_t i = 0; i < n->n_ports; i++)
                if (n->ports[i].rail < 0)
                        n->ports[i].rail = (int)i;
        *ret = TAKE_PTR(n);
        return 0;
}

void topology_node_free(struct topology_node *n)
{
        free(n);
}

const struct topology_port *topology_node_port(const struct topology_node *n, const char *netdev)
{
        for (size_t i = 0; i < n->n_ports; i++)
                if (strcmp(n->ports[i].netdev, netdev) == 0)
                        return &n->ports[i];
        return NULL;
}

bool topology_same_id(const char *a, const char *b)
{
        for (; *a && *b; a++, b++) {
                int x = *a == '-' ? ':' : tolower((unsigned char)*a),
                    y = *b == '-' ? ':' : tolower((unsigned char)*b);

                if (x != y)
                        return false;
        }
        return *a == *b;
}

void topology_node_set_unconfirmed(struct topology_node *n, bool is_unconfirmed)
{
        n->is_unconfirmed = is_unconfirmed;
}
