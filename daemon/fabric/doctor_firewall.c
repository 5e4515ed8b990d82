/*
 * The doctor's firewall check, from the firewall checks with the peers (firewall_check.h): a
 * connection to a port of the listener's ephemeral range that is dropped or refused on a fabric
 * netdev while sparkd's own port works there is a host firewall letting sparkd through but not
 * NCCL's bootstrap and socket transport, which then hang at init. Named on both nodes: the
 * listener's side is the one whose firewall drops inbound.
 */
#include <stdio.h>
#include <string.h>

#include "doctor_checks.h"

static const char *jstr(json_object *o, const char *key, const char *fallback)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v && json_object_is_type(v, json_type_string)
                       ? json_object_get_string(v)
                       : fallback;
}

static int jint(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v ? json_object_get_int(v) : 0;
}

static bool jbool(json_object *o, const char *key)
{
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && v && json_object_get_boolean(v);
}

/* One path that is not open: which node drops, on which netdev, and what still works. */
static void blocked_evidence(struct check *c, json_object *e, char *fix_iface, size_t size, char *fix_node,
                             size_t node_size)
{
        bool is_inbound = strcmp(jstr(e, "direction", ""), "inbound") == 0;
        const char *peer = jstr(e, "peer", "?"), *outcome = jstr(e, "outcome", "?");
        const char *listener_iface = is_inbound ? jstr(e, "iface", "?") : jstr(e, "peer_iface", "?");
        const char *sparkd = jbool(e, "sparkd_port_works") ? "sparkd's port works on this path"
                                                           : "sparkd's peer channel runs over another path";

        if (is_inbound)
                evidence(c,
                         "this node %s new TCP from %s (%s on %s) to ephemeral port %d on %s (%s)%s%s; %s",
                         strcmp(outcome, "dropped") == 0 ? "drops" : "refuses", peer,
                         jstr(e, "peer_address", "?"), jstr(e, "peer_iface", "?"), jint(e, "port"),
                         listener_iface, jstr(e, "address", "?"), jstr(e, "detail", NULL) ? ": " : "",
                         jstr(e, "detail", ""), sparkd);
        else
                evidence(c, "%s %s new TCP to its ephemeral port %d on %s (%s), from %s (%s)%s%s; %s", peer,
                         strcmp(outcome, "dropped") == 0 ? "drops" : "refuses", jint(e, "port"),
                         listener_iface, jstr(e, "peer_address", "?"), jstr(e, "iface", "?"),
                         jstr(e, "address", "?"), jstr(e, "detail", NULL) ? ": " : "", jstr(e, "detail", ""),
                         sparkd);
        snprintf(fix_node, node_size, "%s", is_inbound ? "this node" : peer);
        snprintf(fix_iface, size, "%s", listener_iface);
}

void doctor_check_firewall(struct check *c, const struct fabric_facts *f)
{
        size_t n = json_object_array_length(f->firewall), open = 0, blocked = 0;
        char iface[64] = "", node[80] = "", range[64] = "32768-60999", fix[768];

        check_begin(c, "firewall");
        for (size_t i = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(f->firewall, i);
                const char *outcome = jstr(e, "outcome", "?");

                if (strcmp(outcome, "open") == 0) {
                        open++;
                        evidence(c, "%s %s %s: ephemeral port %d open (%s to %s)", jstr(e, "peer", "?"),
                                 strcmp(jstr(e, "direction", ""), "inbound") == 0 ? "to this node on"
                                                                                  : "from this node on",
                                 jstr(e, "iface", "?"), jint(e, "port"), jstr(e, "address", "?"),
                                 jstr(e, "peer_address", "?"));
                        continue;
                }
                blocked++;
                blocked_evidence(c, e, iface, sizeof(iface), node, sizeof(node));
                snprintf(range, sizeof(range), "%s", jstr(e, "port_range", "32768-60999"));
        }
        if (n == 0) {
                check_end(c, DOCTOR_OK, NULL, "no firewall check with a peer has run yet");
                return;
        }
        if (blocked) {
                snprintf(fix, sizeof(fix),
                         "on %s, let TCP in on the fabric interfaces (NCCL's bootstrap and socket transport "
                         "use "
                         "ephemeral ports): `ufw allow in on %s` or `nft add rule inet filter input iifname "
                         "\"%s\" "
                         "tcp dport %s accept`",
                         node, iface, iface, range);
                check_end(c, DOCTOR_FAIL, fix,
                          "a host firewall drops TCP to ephemeral ports on %zu fabric path%s where sparkd's "
                          "port passes: NCCL jobs would hang at init",
                          blocked, blocked == 1 ? "" : "s");
                return;
        }
        check_end(c, DOCTOR_OK, NULL, "ephemeral TCP ports open on %zu path%s to peers", open,
                  open == 1 ? "" : "s");
}
