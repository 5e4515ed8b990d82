/*
 * The doctor's check of the peers, from the daemon's peer list: peering on, peers found, the
 * same cluster key and the same MTU at both ends of each cable.
 */
#include <string.h>

#include "doctor_checks.h"

static const char *jstr(json_object *o, const char *key, const char *fallback)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : fallback;
}

void doctor_check_peers(struct check *c, const struct fabric_facts *f)
{
        json_object *list = NULL, *v;
        size_t up = 0, rejected = 0, down = 0, mismatched = 0, n;

        check_begin(c, "peers");
        if (!json_object_object_get_ex(f->peers, "peering", &v) || !json_object_get_boolean(v)) {
                check_end(c, DOCTOR_FAIL,
                          "make a key once (sparkc keygen), copy /etc/sparkd/cluster.key to every node "
                          "(mode 600), "
                          "then systemctl reload sparkd",
                          "peering is off: no usable cluster key (see the journal: journalctl -u sparkd)");
                return;
        }
        json_object_object_get_ex(f->peers, "peers", &list);
        n = list ? json_object_array_length(list) : 0;
        for (size_t i = 0; i < n; i++) {
                json_object *p = json_object_array_get_idx(list, i), *mtu = NULL, *addrs = NULL;
                const char *state = jstr(p, "state", "?");
                const char *name = jstr(p, "name", jstr(p, "static", "?"));

                json_object_object_get_ex(p, "mtu", &mtu);
                json_object_object_get_ex(p, "addresses", &addrs);
                if (strcmp(name, "?") == 0 && addrs && json_object_array_length(addrs))
                        name = json_object_get_string(json_object_array_get_idx(addrs, 0));
                if (strcmp(state, "self") == 0)
                        continue;
                up += strcmp(state, "up") == 0;
                rejected += strcmp(state, "rejected") == 0;
                down += strcmp(state, "up") != 0 && strcmp(state, "rejected") != 0;
                if (mtu && json_object_object_get_ex(mtu, "mismatch", &v) && json_object_get_boolean(v)) {
                        json_object *l, *r;

                        json_object_object_get_ex(mtu, "local", &l);
                        json_object_object_get_ex(mtu, "peer", &r);
                        mismatched++;
                        evidence(c, "%s: %s, MTU %d here but %d at its end", name, state,
                                 json_object_get_int(l), json_object_get_int(r));
                        continue;
                }
                evidence(c, "%s: %s%s%s", name, state, jstr(p, "error", NULL) ? ": " : "",
                         jstr(p, "error", ""));
        }
        if (n == 0) {
                check_end(c, DOCTOR_WARN,
                          "check that avahi-daemon runs on every node, or list the others in [peers] static",
                          "no peers found");
                return;
        }
        if (rejected) {
                check_end(c, DOCTOR_FAIL,
                          "copy the same /etc/sparkd/cluster.key to every node, then reload sparkd",
                          "%zu peer%s rejected: the cluster key differs", rejected,
                          rejected == 1 ? "" : "s");
                return;
        }
        if (mismatched) {
                check_end(c, DOCTOR_FAIL,
                          "set the same MTU at both ends of each cable ([fabric] mtu on both nodes); the "
                          "smaller one "
                          "drops larger frames",
                          "MTU differs at the two ends of %zu cable%s", mismatched,
                          mismatched == 1 ? "" : "s");
                return;
        }
        if (down) {
                check_end(c, DOCTOR_WARN,
                          "check the cable and the other node's sparkd (sparkc status there)",
                          "%zu of %zu peers not up", down, up + down);
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "%zu peer%s up, authenticated, MTU equal at both ends", up,
                  up == 1 ? "" : "s");
}
