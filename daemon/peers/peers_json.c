#include "peers.h"

#include <string.h>
#include <time.h>

#include "discovery.h"
#include "peer_table.h"

static json_object *peer_to_json(const struct peer *p)
{
        json_object *o = json_object_new_object(), *addrs = json_object_new_array(), *via = NULL, *mtu;
        char since[32];
        struct tm tm;

        for (char **a = p->addresses; a && *a; a++)
                json_object_array_add(addrs, json_object_new_string(*a));
        gmtime_r(&p->since, &tm);
        strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
        json_object_object_add(o, "name", p->name[0] ? json_object_new_string(p->name) : NULL);
        json_object_object_add(o, "node_id", p->node_id[0] ? json_object_new_string(p->node_id) : NULL);
        json_object_object_add(o, "state",
                               json_object_new_string(p->is_self ? "self" : peer_state_to_string(p->state)));
        json_object_object_add(o, "since", json_object_new_string(since));
        json_object_object_add(o, "slow", json_object_new_boolean(p->state == PEER_UP && p->is_slow));
        json_object_object_add(o, "silent_ms",
                               p->state == PEER_UP ? json_object_new_int64((int64_t)(p->silent_usec / 1000))
                                                   : NULL);
        json_object_object_add(o, "static", p->static_spec ? json_object_new_string(p->static_spec) : NULL);
        json_object_object_add(o, "discovered", json_object_new_boolean(p->is_discovered));
        json_object_object_add(o, "addresses", addrs);
        if (p->via_remote[0]) {
                via = json_object_new_object();
                json_object_object_add(via, "iface",
                                       p->via_ifname[0] ? json_object_new_string(p->via_ifname) : NULL);
                json_object_object_add(via, "local", json_object_new_string(p->via_local));
                json_object_object_add(via, "remote", json_object_new_string(p->via_remote));
        }
        json_object_object_add(o, "via", via);
        if (p->chassis.id[0]) {
                json_object *chassis = json_object_new_object();

                json_object_object_add(chassis, "id", json_object_new_string(p->chassis.id));
                json_object_object_add(chassis, "name", json_object_new_string(p->chassis.name));
                json_object_object_add(o, "chassis", chassis);
        } else {
                json_object_object_add(o, "chassis", NULL);
        }
        json_object_object_add(o, "ports", json_object_get(p->ports));
        json_object_object_add(o, "version", p->version[0] ? json_object_new_string(p->version) : NULL);
        mtu = json_object_new_object();
        json_object_object_add(mtu, "local", p->local_mtu ? json_object_new_int((int)p->local_mtu) : NULL);
        json_object_object_add(mtu, "peer", p->peer_mtu ? json_object_new_int((int)p->peer_mtu) : NULL);
        json_object_object_add(mtu, "mismatch", json_object_new_boolean(p->is_mtu_mismatch));
        json_object_object_add(o, "mtu", mtu);
        json_object_object_add(o, "error", p->last_error ? json_object_new_string(p->last_error) : NULL);
        return o;
}

json_object *peers_to_json(struct peers *ps)
{
        json_object *o = json_object_new_object(), *list = json_object_new_array();
        struct peer *p;

        LIST_FOREACH(p, &ps->peers, link)
                json_object_array_add(list, peer_to_json(p));
        json_object_object_add(o, "peering", json_object_new_boolean(ps->tls && ps->listener));
        json_object_object_add(o, "key_id", ps->tls ? json_object_new_string(ps->key_id) : NULL);
        json_object_object_add(o, "port", json_object_new_int(ps->port));
        json_object_object_add(o, "handshakes", json_object_new_int64((int64_t)ps->handshakes));
        json_object_object_add(o, "bytes_sent", json_object_new_int64((int64_t)ps->bytes_sent));
        json_object_object_add(o, "sent_last_minute",
                               json_object_new_int64((int64_t)peer_sent_last_minute(ps)));
        json_object_object_add(o, "budget_per_minute", json_object_new_int64((int64_t)peers_budget(ps)));
        json_object_object_add(o, "sends_deferred", json_object_new_int64((int64_t)ps->sends_deferred));
        json_object_object_add(o, "off_reason",
                               ps->tls && ps->listener ? NULL
                               : ps->off_reason[0]     ? json_object_new_string(ps->off_reason)
                                                       : json_object_new_string("not configured yet"));
        json_object_object_add(o, "mdns",
                               json_object_new_string(!ps->discovery ? "off"
                                                      : discovery_is_available(ps->discovery)
                                                              ? "running"
                                                              : "waiting for avahi-daemon"));
        json_object_object_add(o, "peers", list);
        return o;
}

json_object *peers_lookup(struct peers *ps, const char *what, json_object **all)
{
        json_object *list, *found = NULL;
        size_t matches = 0;

        *all = peers_to_json(ps);
        json_object_object_get_ex(*all, "peers", &list);
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *p = json_object_array_get_idx(list, i), *name, *id, *addrs;
                bool hit = false;

                if (json_object_object_get_ex(p, "name", &name) && name &&
                    strcmp(json_object_get_string(name), what) == 0)
                        hit = true;
                if (json_object_object_get_ex(p, "node_id", &id) && id && strlen(what) >= 4 &&
                    strncmp(json_object_get_string(id), what, strlen(what)) == 0)
                        hit = true;
                if (json_object_object_get_ex(p, "addresses", &addrs))
                        for (size_t k = 0; k < json_object_array_length(addrs); k++)
                                if (strcmp(json_object_get_string(json_object_array_get_idx(addrs, k)),
                                           what) == 0)
                                        hit = true;
                if (hit) {
                        found = p;
                        matches++;
                }
        }
        return matches == 1 ? found : NULL;
}
