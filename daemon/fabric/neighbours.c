#include "neighbours.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/macro.h"
#include "inventory/port_number.h"

static const char *jstr(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : NULL;
}

static json_object *jarray(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_array) ? v : NULL;
}

/* "10.0.0.1/24" into its network and prefix; false for anything else (IPv6 included). */
static bool ipv4_network(const char *s, uint32_t *net, unsigned *prefix)
{
        char buf[64];
        const char *slash = strchr(s, '/');
        struct in_addr a;
        char *end;
        unsigned long p = 32;

        if (!slash || (size_t)(slash - s) >= sizeof(buf))
                return false;
        memcpy(buf, s, (size_t)(slash - s));
        buf[slash - s] = '\0';
        p = strtoul(slash + 1, &end, 10);
        if (*end || p > 32 || inet_pton(AF_INET, buf, &a) != 1)
                return false;
        *prefix = (unsigned)p;
        *net = p == 0 ? 0 : ntohl(a.s_addr) & (0xffffffffu << (32 - p));
        return true;
}

static bool same_subnet(const char *a, const char *b)
{
        uint32_t na, nb;
        unsigned pa, pb;

        return ipv4_network(a, &na, &pa) && ipv4_network(b, &nb, &pb) && pa == pb && na == nb;
}

/* The subnet ("10.10.0.0/24") of the first of ours that one of theirs shares. */
static void subnet_of(json_object *ours, json_object *theirs, char *buf, size_t size)
{
        buf[0] = '\0';
        for (size_t a = 0; ours && a < json_object_array_length(ours); a++)
                for (size_t b = 0; theirs && b < json_object_array_length(theirs); b++) {
                        const char *x = json_object_get_string(json_object_array_get_idx(ours, a));
                        uint32_t net;
                        unsigned prefix;
                        struct in_addr in;
                        char text[INET_ADDRSTRLEN];

                        if (!same_subnet(x, json_object_get_string(json_object_array_get_idx(theirs, b))) ||
                            !ipv4_network(x, &net, &prefix))
                                continue;
                        in.s_addr = htonl(net);
                        inet_ntop(AF_INET, &in, text, sizeof(text));
                        snprintf(buf, size, "%s/%u", text, prefix);
                        return;
                }
}

/* The peer and its port with an address on the subnet of one of addresses; NULL when none or
 * more than one peer is there (a switch or a shared segment: the far end is not one node; then
 * *n_peers says how many, and subnet which subnet, "10.10.0.0/24"). */
static json_object *peer_on_subnet(json_object *peers, json_object *addresses, json_object **port,
                                   size_t *n_peers, char *subnet, size_t subnet_size)
{
        json_object *list = peers ? jarray(peers, "peers") : NULL, *found = NULL;

        *n_peers = 0;

        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i), *ports = jarray(p, "ports");
                const char *state = jstr(p, "state");

                if (!jstr(p, "node_id") || !state || strcmp(state, "self") == 0)
                        continue;
                for (size_t k = 0; ports && k < json_object_array_length(ports); k++) {
                        json_object *pp = json_object_array_get_idx(ports, k),
                                    *theirs = jarray(pp, "addresses");
                        bool is_match = false;

                        for (size_t a = 0; addresses && a < json_object_array_length(addresses); a++)
                                for (size_t b = 0; theirs && b < json_object_array_length(theirs); b++)
                                        is_match |=
                                                same_subnet(json_object_get_string(
                                                                    json_object_array_get_idx(addresses, a)),
                                                            json_object_get_string(
                                                                    json_object_array_get_idx(theirs, b)));
                        if (!is_match)
                                continue;
                        if (found == p)
                                continue;
                        if (!found)
                                subnet_of(addresses, theirs, subnet, subnet_size);
                        found = p;
                        *port = pp;
                        ++*n_peers;
                }
        }
        return *n_peers == 1 ? found : NULL;
}

/* The sparkd node an LLDP neighbour is: chassis id, then chassis name, then node name. */
static const char *peer_node_of(json_object *peers, const struct lldp_neighbour *nb)
{
        json_object *list = peers ? jarray(peers, "peers") : NULL;
        const char *by_name = NULL, *by_node_name = NULL;

        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i), *chassis = NULL;
                const char *id = jstr(p, "node_id"), *cid, *cname, *name = jstr(p, "name");

                if (!id)
                        continue;
                json_object_object_get_ex(p, "chassis", &chassis);
                cid = chassis ? jstr(chassis, "id") : NULL;
                cname = chassis ? jstr(chassis, "name") : NULL;
                if (cid && nb->chassis_id[0] && strcasecmp(cid, nb->chassis_id) == 0)
                        return id;
                if (!by_name && cname && cname[0] && nb->sysname[0] && strcmp(cname, nb->sysname) == 0)
                        by_name = id;
                if (!by_node_name && name && nb->sysname[0] && strcmp(name, nb->sysname) == 0)
                        by_node_name = id;
        }
        return by_name ? by_name : by_node_name;
}

static json_object *neighbour_from_lldp(const struct lldp_neighbour *nb, json_object *peers)
{
        json_object *o = json_object_new_object();
        const char *node_id = peer_node_of(peers, nb);

        json_object_object_add(o, "source", json_object_new_string("lldp"));
        json_object_object_add(o, "chassis_id", json_object_new_string(nb->chassis_id));
        json_object_object_add(o, "chassis_id_subtype", json_object_new_string(nb->chassis_id_subtype));
        json_object_object_add(o, "sysname", json_object_new_string(nb->sysname));
        json_object_object_add(o, "port_id", json_object_new_string(nb->port_id));
        json_object_object_add(o, "port_id_subtype", json_object_new_string(nb->port_id_subtype));
        json_object_object_add(o, "port_descr", json_object_new_string(nb->port_descr));
        json_object_object_add(o, "speed_mbps", json_object_new_int64(nb->speed_mbps));
        json_object_object_add(o, "is_bridge", json_object_new_boolean(nb->is_bridge));
        json_object_object_add(o, "node_id", node_id ? json_object_new_string(node_id) : NULL);
        return o;
}

static json_object *neighbour_from_peer(json_object *peer, json_object *port, bool is_lldp_running)
{
        json_object *o = json_object_new_object(), *chassis = NULL;
        const char *ifname = jstr(port, "ifname"), *cid = NULL;

        json_object_object_get_ex(peer, "chassis", &chassis);
        cid = chassis ? jstr(chassis, "id") : NULL;
        json_object_object_add(o, "source", json_object_new_string("peer"));
        json_object_object_add(o, "chassis_id", json_object_new_string(cid ? cid : ""));
        json_object_object_add(o, "chassis_id_subtype", json_object_new_string(cid ? "mac" : ""));
        json_object_object_add(o, "sysname",
                               json_object_new_string(jstr(peer, "name") ? jstr(peer, "name") : ""));
        json_object_object_add(o, "port_id", json_object_new_string(ifname ? ifname : ""));
        json_object_object_add(o, "port_id_subtype", json_object_new_string("ifname"));
        json_object_object_add(o, "port_descr", json_object_new_string(ifname ? ifname : ""));
        json_object_object_add(o, "speed_mbps", json_object_new_int64(-1));
        json_object_object_add(o, "is_bridge", json_object_new_boolean(false));
        json_object_object_add(o, "lldp_silent", json_object_new_boolean(is_lldp_running));
        json_object_object_add(o, "node_id", json_object_new_string(jstr(peer, "node_id")));
        return o;
}

/* Does another port of this node (not the twin of links[i]) have an address in one subnet with
 * addresses? Then several peers there need not be behind one switch: a ring on one link-local
 * /16 looks the same, and the far ends are not known. */
static bool is_subnet_shared(json_object *links, size_t i, json_object *addresses)
{
        json_object *l = json_object_array_get_idx(links, i);
        const char *twin = jstr(l, "twin");

        for (size_t k = 0; k < json_object_array_length(links); k++) {
                json_object *o = json_object_array_get_idx(links, k), *theirs = jarray(o, "addresses");

                if (k == i || (twin && jstr(o, "name") && strcmp(jstr(o, "name"), twin) == 0))
                        continue;
                for (size_t a = 0; addresses && a < json_object_array_length(addresses); a++)
                        for (size_t b = 0; theirs && b < json_object_array_length(theirs); b++)
                                if (same_subnet(
                                            json_object_get_string(json_object_array_get_idx(addresses, a)),
                                            json_object_get_string(json_object_array_get_idx(theirs, b))))
                                        return true;
        }
        return false;
}

/* Several peers on this port's subnet and no LLDP from it: a switch that neither speaks nor
 * forwards LLDP (unmanaged, or LLDP off), or one not listened to. Every node on the subnet names
 * it alike, so the map draws one switch with every node's port on it. */
static json_object *neighbour_silent_switch(const char *subnet, bool is_lldp_running)
{
        json_object *o = json_object_new_object();
        char id[80], name[96];

        snprintf(id, sizeof(id), "subnet %s", subnet);
        snprintf(name, sizeof(name), "%sswitch %s", is_lldp_running ? "silent " : "", subnet);
        json_object_object_add(o, "source", json_object_new_string("peer"));
        json_object_object_add(o, "chassis_id", json_object_new_string(id));
        json_object_object_add(o, "chassis_id_subtype", json_object_new_string("subnet"));
        json_object_object_add(o, "sysname", json_object_new_string(name));
        json_object_object_add(o, "port_id", json_object_new_string(""));
        json_object_object_add(o, "port_id_subtype", json_object_new_string(""));
        json_object_object_add(o, "port_descr", json_object_new_string(""));
        json_object_object_add(o, "speed_mbps", json_object_new_int64(-1));
        json_object_object_add(o, "is_bridge", json_object_new_boolean(true));
        json_object_object_add(o, "lldp_silent", json_object_new_boolean(is_lldp_running));
        json_object_object_add(o, "node_id", NULL);
        return o;
}

/* The subnet of the silent switch port links[i] faces (several peers there, no other port of this
 * node on it), into subnet; false when it faces none. */
static bool silent_switch_subnet(json_object *links, size_t i, json_object *peers, char *subnet, size_t size)
{
        json_object *addresses = jarray(json_object_array_get_idx(links, i), "addresses"), *port = NULL;
        size_t n_peers;

        return !peer_on_subnet(peers, addresses, &port, &n_peers, subnet, size) && n_peers > 1 &&
               !is_subnet_shared(links, i, addresses);
}

/* Both twins of a port reach a silent switch through one QSFP cable, each on a subnet of its own:
 * they name it by the lesser of the two subnets, so the map draws one cable to one switch, as
 * every node on it names it alike. */
static void silent_switch_name(json_object *links, size_t i, json_object *peers, char *subnet, size_t size)
{
        const char *twin = jstr(json_object_array_get_idx(links, i), "twin");
        char theirs[64];

        for (size_t k = 0; twin && k < json_object_array_length(links); k++) {
                const char *name = jstr(json_object_array_get_idx(links, k), "name");

                if (k == i || !name || strcmp(name, twin) != 0)
                        continue;
                if (silent_switch_subnet(links, k, peers, theirs, sizeof(theirs)) &&
                    strcmp(theirs, subnet) < 0)
                        snprintf(subnet, size, "%s", theirs);
                return;
        }
}

static const struct lldp_neighbour *lldp_on(const struct lldp_table *t, const char *ifname)
{
        for (size_t i = 0; i < t->n; i++)
                if (strcmp(t->v[i].ifname, ifname) == 0)
                        return &t->v[i];
        return NULL;
}

void neighbours_number_ports(json_object *list, const char *name_key, int *ports)
{
        size_t n = list ? json_object_array_length(list) : 0;
        struct port_number_netdev *v = calloc(n ? n : 1, sizeof(*v));

        if (!v) {
                for (size_t i = 0; i < n; i++)
                        ports[i] = -1;
                return;
        }
        for (size_t i = 0; i < n; i++) {
                json_object *l = json_object_array_get_idx(list, i), *dev_port;

                v[i] = (struct port_number_netdev){ .name = jstr(l, name_key),
                                                    .pci = jstr(l, "pci"),
                                                    .twin = jstr(l, "twin") };
                if (json_object_object_get_ex(l, "dev_port", &dev_port) && dev_port)
                        v[i].dev_port = json_object_get_int(dev_port);
        }
        port_number_assign(v, n, ports);
        free(v);
}

static json_object *port_json(json_object *links, size_t i, int rail, const struct lldp_table *lldp,
                              json_object *peers)
{
        json_object *l = json_object_array_get_idx(links, i), *o = json_object_new_object(), *v;
        const char *name = jstr(l, "name") ? jstr(l, "name") : "";
        json_object *addresses = jarray(l, "addresses"), *neighbour = NULL;

        json_object_object_add(o, "netdev", json_object_new_string(name));
        json_object_object_add(o, "mac", json_object_new_string(jstr(l, "mac") ? jstr(l, "mac") : ""));
        json_object_object_add(o, "twin", json_object_new_string(jstr(l, "twin") ? jstr(l, "twin") : ""));
        json_object_object_add(o, "rail", rail >= 0 ? json_object_new_int(rail) : NULL);
        json_object_object_add(o, "pci", json_object_new_string(jstr(l, "pci") ? jstr(l, "pci") : ""));
        json_object_object_add(o, "speed_mbps",
                               json_object_new_int64(json_object_object_get_ex(l, "speed_mbps", &v) && v
                                                             ? json_object_get_int64(v)
                                                             : -1));
        json_object_object_add(
                o, "mtu",
                json_object_new_int(json_object_object_get_ex(l, "mtu", &v) ? json_object_get_int(v) : 0));
        json_object_object_add(
                o, "oper", json_object_new_string(jstr(l, "operstate") ? jstr(l, "operstate") : "unknown"));
        json_object_object_add(o, "addresses",
                               addresses ? json_object_get(addresses) : json_object_new_array());
        if (lldp->status == LLDP_RUNNING) {
                const struct lldp_neighbour *nb = lldp_on(lldp, name);

                if (nb)
                        neighbour = neighbour_from_lldp(nb, peers);
        }
        /* LLDP silence is not a missing cable: where lldpd hears nothing (or does not run), the
         * peer channel says who is reached through the port. */
        if (!neighbour) {
                json_object *port = NULL, *peer;
                size_t n_peers;
                char subnet[64];

                peer = peer_on_subnet(peers, addresses, &port, &n_peers, subnet, sizeof(subnet));
                if (peer)
                        neighbour = neighbour_from_peer(peer, port, lldp->status == LLDP_RUNNING);
                else if (n_peers > 1 && !is_subnet_shared(links, i, addresses)) {
                        silent_switch_name(links, i, peers, subnet, sizeof(subnet));
                        neighbour = neighbour_silent_switch(subnet, lldp->status == LLDP_RUNNING);
                }
        }
        json_object_object_add(o, "neighbour", neighbour);
        return o;
}

static int link_name_compare(const void *a, const void *b)
{
        const char *x = jstr(*(json_object *const *)a, "name"), *y = jstr(*(json_object *const *)b, "name");

        return strcmp(x ? x : "", y ? y : "");
}

json_object *neighbours_build(json_object *links, const struct lldp_table *lldp, json_object *peers)
{
        json_object *o = json_object_new_object(), *ports = json_object_new_array(), *sorted;
        _cleanup_free_ int *rails = NULL;
        char status[200], detail[300];

        lldp_table_status(lldp, status, sizeof(status));
        json_object_object_add(o, "lldpd", json_object_new_string(status));
        lldp_table_detail(lldp, detail, sizeof(detail));
        json_object_object_add(o, "lldpd_detail", json_object_new_string(detail));
        if (lldp->status == LLDP_RUNNING && lldp->has_chassis) {
                json_object *chassis = json_object_new_object();

                json_object_object_add(chassis, "id", json_object_new_string(lldp->chassis_id));
                json_object_object_add(chassis, "name", json_object_new_string(lldp->chassis_name));
                json_object_object_add(o, "chassis", chassis);
        } else {
                json_object_object_add(o, "chassis", NULL);
        }
        /* The ports in name order (the links method's already); their numbers from the hardware. */
        sorted = json_object_new_array();
        for (size_t i = 0; links && i < json_object_array_length(links); i++)
                json_object_array_add(sorted, json_object_get(json_object_array_get_idx(links, i)));
        json_object_array_sort(sorted, link_name_compare);
        rails = calloc(json_object_array_length(sorted) + 1, sizeof(*rails));
        if (rails)
                neighbours_number_ports(sorted, "name", rails);
        for (size_t i = 0; i < json_object_array_length(sorted); i++)
                json_object_array_add(ports, port_json(sorted, i, rails ? rails[i] : -1, lldp, peers));
        json_object_put(sorted);
        json_object_object_add(o, "ports", ports);
        return o;
}
