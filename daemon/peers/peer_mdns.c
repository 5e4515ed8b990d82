#include "peer_mdns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strutil.h"
#include "daemon/base/log.h"
#include "peer_connect.h"
#include "peer_ports.h"
#include "peer_session.h"

/* mDNS records are not authenticated: anyone on the link can announce them. Bounds keep a flood of
 * made-up nodes or addresses from growing the table without end; a record beyond them is dropped
 * (the key still decides who gets in, so a real node past the bound is a static peer away). */
#define DISCOVERED_PEERS_MAX 256
#define PEER_ADDRESSES_MAX   16

static unsigned count_discovered(struct peers *ps)
{
        struct peer *p;
        unsigned n = 0;

        LIST_FOREACH(p, &ps->peers, link)
                n += p->is_discovered && !p->static_spec;
        return n;
}

void peer_mdns_found(const struct discovery_record *r, void *userdata)
{
        struct peers *ps = userdata;
        struct peer *p = peer_find_by_id(ps, r->node_id);

        if (!p) {
                if (count_discovered(ps) >= DISCOVERED_PEERS_MAX) {
                        log_debug("mDNS: %s (%s) ignored: %d discovered peers already", r->name, r->node_id,
                                  DISCOVERED_PEERS_MAX);
                        return;
                }
                p = peer_new(ps);
                if (!p)
                        return;
                snprintf(p->node_id, sizeof(p->node_id), "%s", r->node_id);
        }
        if (!p->name[0] || p->state != PEER_UP)
                snprintf(p->name, sizeof(p->name), "%s", r->name);
        p->is_discovered = true;
        for (char **a = r->addresses; a && *a && strv_length(p->addresses) < PEER_ADDRESSES_MAX; a++)
                if (!strv_contains(p->addresses, *a))
                        (void)strv_push(&p->addresses, *a);
        if (!p->conn && !p->dialing && !peer_is_retry_pending(p))
                peer_dial(p);
}

void peer_mdns_lost(const char *node_id, void *userdata)
{
        struct peer *p = peer_find_by_id(userdata, node_id);

        /* A live connection outranks mDNS: the heartbeat says when the peer is really gone. */
        if (p && !p->conn && !p->static_spec && p->state != PEER_UP) {
                log_info("peer %s left mDNS", peer_label(p));
                peer_remove(p);
        } else if (p) {
                p->is_discovered = false;
        }
}

/* The IPv4 addresses of the fabric ports, without their prefix; joined gets them each followed
 * by a comma. */
static void collect_addresses(struct peers *ps, char ***addresses, char *joined, size_t size)
{
        struct link_ports mine = { 0 };

        (void)peer_ports_local(ps->links, &mine);
        for (size_t i = 0; *addresses && i < mine.n; i++)
                for (char **a = mine.v[i].addresses; a && *a; a++) {
                        char ip[64];
                        size_t n = strcspn(*a, "/");

                        if (strchr(*a, ':') || n >= sizeof(ip))
                                continue;
                        memcpy(ip, *a, n);
                        ip[n] = '\0';
                        (void)strv_push(addresses, ip);
                        snprintf(joined + strlen(joined), size - strlen(joined), "%s,", ip);
                }
        link_ports_clear(&mine);
}

void peer_mdns_publish(struct peers *ps)
{
        struct discovery_record self = { .proto = DISCOVERY_PROTO, .port = ps->port };
        char joined[512] = "";

        if (!ps->discovery)
                return;
        self.addresses = calloc(1, sizeof(char *));
        collect_addresses(ps, &self.addresses, joined, sizeof(joined));
        snprintf(joined + strlen(joined), sizeof(joined) - strlen(joined), "%s:%u", ps->name, ps->port);
        if (strcmp(joined, ps->published) != 0) {
                snprintf(self.node_id, sizeof(self.node_id), "%s", ps->node_id);
                snprintf(self.name, sizeof(self.name), "%s", ps->name);
                if (discovery_publish(ps->discovery, &self) == 0)
                        snprintf(ps->published, sizeof(ps->published), "%s", joined);
        }
        strv_free(self.addresses);
}
