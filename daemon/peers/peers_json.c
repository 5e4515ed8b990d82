#include "peers.h"

#include <string.h>
#include <time.h>

#include "common/strutil.h"
#include "discovery.h"
#include "peer_table.h"

/* Every key here is a literal, added once: json-c neither copies it nor looks it up first. The
 * list is made for every reader of the peers (the cluster's sections, the doctor, the cabling),
 * and the copies of its keys were 23 of some 50 allocations a peer. */
static void add_field(json_object *o, const char *key, json_object *value)
{
        (void)json_object_object_add_ex(o, key, value,
                                        JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_ADD_CONSTANT_KEY);
}

static json_object *peer_to_json(const struct peer *p)
{
        json_object *o = json_object_new_object(), *addrs = json_object_new_array(), *via = NULL, *mtu;
        char since[32];
        struct tm tm;

        for (char **a = p->addresses; a && *a; a++)
                json_object_array_add(addrs, json_object_new_string(*a));
        gmtime_r(&p->since, &tm);
        strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
        add_field(o, "name", p->name[0] ? json_object_new_string(p->name) : NULL);
        add_field(o, "node_id", p->node_id[0] ? json_object_new_string(p->node_id) : NULL);
        add_field(o, "state", json_object_new_string(p->is_self ? "self" : peer_state_to_string(p->state)));
        add_field(o, "since", json_object_new_string(since));
        add_field(o, "slow", json_object_new_boolean(p->state == PEER_UP && p->is_slow));
        add_field(o, "silent_ms",
                  p->state == PEER_UP ? json_object_new_int64((int64_t)(p->silent_usec / 1000)) : NULL);
        add_field(o, "static", p->static_spec ? json_object_new_string(p->static_spec) : NULL);
        add_field(o, "discovered", json_object_new_boolean(p->is_discovered));
        add_field(o, "addresses", addrs);
        if (p->via_remote[0]) {
                via = json_object_new_object();
                add_field(via, "iface", p->via_ifname[0] ? json_object_new_string(p->via_ifname) : NULL);
                add_field(via, "local", json_object_new_string(p->via_local));
                add_field(via, "remote", json_object_new_string(p->via_remote));
        }
        add_field(o, "via", via);
        if (p->chassis.id[0]) {
                json_object *chassis = json_object_new_object();

                add_field(chassis, "id", json_object_new_string(p->chassis.id));
                add_field(chassis, "name", json_object_new_string(p->chassis.name));
                add_field(o, "chassis", chassis);
        } else {
                add_field(o, "chassis", NULL);
        }
        add_field(o, "ports", json_object_get(p->ports));
        add_field(o, "version", p->version[0] ? json_object_new_string(p->version) : NULL);
        mtu = json_object_new_object();
        add_field(mtu, "local", p->local_mtu ? json_object_new_int((int)p->local_mtu) : NULL);
        add_field(mtu, "peer", p->peer_mtu ? json_object_new_int((int)p->peer_mtu) : NULL);
        add_field(mtu, "mismatch", json_object_new_boolean(p->is_mtu_mismatch));
        add_field(o, "mtu", mtu);
        add_field(o, "error", p->last_error ? json_object_new_string(p->last_error) : NULL);
        return o;
}

json_object *peers_to_json(struct peers *ps)
{
        json_object *o = json_object_new_object(), *list = json_object_new_array();
        struct peer *p;

        LIST_FOREACH(p, &ps->peers, link)
                json_object_array_add(list, peer_to_json(p));
        add_field(o, "peering", json_object_new_boolean(ps->tls && ps->listener));
        add_field(o, "key_id", ps->tls ? json_object_new_string(ps->key_id) : NULL);
        add_field(o, "port", json_object_new_int(ps->port));
        add_field(o, "handshakes", json_object_new_int64((int64_t)ps->handshakes));
        add_field(o, "bytes_sent", json_object_new_int64((int64_t)ps->bytes_sent));
        add_field(o, "sent_last_minute", json_object_new_int64((int64_t)peer_sent_last_minute(ps)));
        add_field(o, "budget_per_minute", json_object_new_int64((int64_t)peers_budget(ps)));
        add_field(o, "sends_deferred", json_object_new_int64((int64_t)ps->sends_deferred));
        add_field(o, "off_reason",
                  ps->tls && ps->listener ? NULL
                  : ps->off_reason[0]     ? json_object_new_string(ps->off_reason)
                                          : json_object_new_string("not configured yet"));
        add_field(o, "mdns",
                  json_object_new_string(!ps->discovery ? "off"
                                         : discovery_is_available(ps->discovery)
                                                 ? "running"
                                                 : "waiting for avahi-daemon"));
        add_field(o, "peers", list);
        return o;
}

static bool peer_matches(const struct peer *p, const char *what)
{
        size_t len = strlen(what);

        if (p->name[0] && strcmp(p->name, what) == 0)
                return true;
        if (p->node_id[0] && len >= 4 && strncmp(p->node_id, what, len) == 0)
                return true;
        for (char **a = p->addresses; a && *a; a++)
                if (strcmp(*a, what) == 0)
                        return true;
        return false;
}

json_object *peers_lookup(struct peers *ps, const char *what, json_object **all)
{
        struct peer *p, *found = NULL;
        size_t matches = 0;

        /* The one peer's JSON, not the list's: a probe, a firewall check and a deferred result
         * each look one up, and at 64 nodes the list is some 2,500 allocations and 260 KiB. */
        LIST_FOREACH(p, &ps->peers, link)
                if (peer_matches(p, what)) {
                        found = p;
                        matches++;
                }
        *all = matches == 1 ? peer_to_json(found) : NULL;
        return *all;
}

char **peers_up_ids(struct peers *ps)
{
        char **ids = NULL;
        struct peer *p;

        LIST_FOREACH(p, &ps->peers, link)
                if (!p->is_self && p->state == PEER_UP && p->node_id[0] && strv_push(&ids, p->node_id) < 0) {
                        strv_free(ids);
                        return NULL;
                }
        return ids;
}
