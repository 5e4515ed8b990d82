#include "peer_ports.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int peer_ports_local(struct links *links, struct link_ports *ret)
{
        if (!links) {
                *ret = (struct link_ports){ 0 };
                return 0;
        }
        return links_get_ports(links, ret);
}

json_object *peer_ports_to_json(const struct link_ports *ports)
{
        json_object *out = json_object_new_array();

        for (size_t i = 0; i < ports->n; i++) {
                const struct link_port *p = &ports->v[i];
                json_object *port = json_object_new_object(), *addrs = json_object_new_array();

                for (char **a = p->addresses; a && *a; a++)
                        json_object_array_add(addrs, json_object_new_string(*a));
                json_object_object_add(port, "ifname", json_object_new_string(p->name));
                json_object_object_add(port, "addresses", addrs);
                json_object_object_add(port, "mtu", json_object_new_int((int)p->mtu));
                json_object_array_add(out, port);
        }
        return out;
}

bool peer_ipv4_parse(const char *s, struct in_addr *addr, unsigned *prefix)
{
        char buf[64];
        const char *slash = strchr(s, '/');
        size_t n = slash ? (size_t)(slash - s) : strlen(s);

        if (n >= sizeof(buf))
                return false;
        memcpy(buf, s, n);
        buf[n] = '\0';
        if (prefix)
                *prefix = slash ? (unsigned)atoi(slash + 1) : 32;
        return inet_pton(AF_INET, buf, addr) == 1;
}

/* Whether a port's address ("ADDR/PREFIX") is target, or on its subnet when by_subnet. */
static bool address_matches(const char *a, const struct in_addr *target, bool by_subnet)
{
        struct in_addr local;
        unsigned prefix;
        uint32_t mask;

        if (!a || !peer_ipv4_parse(a, &local, &prefix) || prefix > 32)
                return false;
        mask = by_subnet ? (prefix ? htonl(~0U << (32 - prefix)) : 0) : 0xffffffffU;
        return (local.s_addr & mask) == (target->s_addr & mask);
}

const struct link_port *peer_port_for_address(const struct link_ports *ports, const char *ip, bool by_subnet,
                                              const char **address)
{
        struct in_addr target;

        if (!peer_ipv4_parse(ip, &target, NULL))
                return NULL;
        for (size_t i = 0; i < ports->n; i++)
                for (char **a = ports->v[i].addresses; a && *a; a++)
                        if (address_matches(*a, &target, by_subnet)) {
                                if (address)
                                        *address = *a;
                                return &ports->v[i];
                        }
        return NULL;
}

json_object *peer_port_in_json(json_object *ports, const char *ip)
{
        struct in_addr target;

        if (!json_object_is_type(ports, json_type_array) || !peer_ipv4_parse(ip, &target, NULL))
                return NULL;
        for (size_t i = 0; i < json_object_array_length(ports); i++) {
                json_object *port = json_object_array_get_idx(ports, i), *addrs;

                if (!json_object_object_get_ex(port, "addresses", &addrs) ||
                    !json_object_is_type(addrs, json_type_array))
                        continue;
                for (size_t k = 0; k < json_object_array_length(addrs); k++)
                        if (address_matches(json_object_get_string(json_object_array_get_idx(addrs, k)),
                                            &target, false))
                                return port;
        }
        return NULL;
}

const char *peer_port_json_ifname(json_object *port)
{
        json_object *v;

        return json_object_object_get_ex(port, "ifname", &v) ? json_object_get_string(v) : NULL;
}

unsigned peer_port_json_mtu(json_object *port)
{
        json_object *v;

        return json_object_object_get_ex(port, "mtu", &v) ? (unsigned)json_object_get_int(v) : 0;
}
