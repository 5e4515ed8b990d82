#include "peer_connect.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/strutil.h"
#include "daemon/base/log.h"
#include "peer_ports.h"
#include "peer_session.h"

/* Binds fd to this node's address on the subnet of the peer's: in a mesh each cable is its own
 * subnet, so this picks the port. */
static void bind_to_port_for(struct peers *ps, int fd, const char *address)
{
        struct link_ports mine = { 0 };
        struct sockaddr_in local = { .sin_family = AF_INET };
        const char *local_addr = NULL;

        (void)peer_ports_local(ps->links, &mine);
        if (peer_port_for_address(&mine, address, true, &local_addr) && local_addr &&
            peer_ipv4_parse(local_addr, &local.sin_addr, NULL) &&
            bind(fd, (struct sockaddr *)&local, sizeof(local)) < 0)
                log_debug("peers: cannot bind to %s for %s: %m", local_addr, address);
        link_ports_clear(&mine);
}

static void peer_dial_address(struct peer *p, const char *address)
{
        struct peers *ps = p->owner;
        struct sockaddr_in remote = { .sin_family = AF_INET, .sin_port = htons(ps->port) };
        struct peer_conn *c;
        int fd, r;

        if (inet_pton(AF_INET, address, &remote.sin_addr) != 1)
                return;
        fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                peer_set_error(p, "socket: %s", strerror(errno));
                peer_schedule_retry(p);
                return;
        }
        bind_to_port_for(ps, fd, address);

        c = peer_session_new(ps, fd, true, p);
        if (!c) {
                peer_schedule_retry(p);
                return;
        }
        p->dialing = c;
        snprintf(c->remote, sizeof(c->remote), "%s", address);
        r = peer_conn_connect(c, &remote);
        if (r < 0) {
                peer_set_error(p, "connect to %s: %s", address, strerror(-r));
                peer_session_close(c, NULL);
                return;
        }
        /* Only a first dial shows as connecting: a peer that was up and is being redialled stays
         * down until it answers, so `down` is what a lost peer reads as. */
        if (p->state == PEER_DISCOVERED)
                peer_set_state(p, PEER_CONNECTING);
}

static void on_resolved(int result, struct evutil_addrinfo *res, void *userdata)
{
        struct peer *p = userdata;
        char address[64];

        if (result != 0 || !res) {
                peer_set_error(p, "cannot resolve %s: %s", p->static_spec, evutil_gai_strerror(result));
                peer_schedule_retry(p);
                return;
        }
        peer_format_sockaddr((struct sockaddr_in *)res->ai_addr, address, sizeof(address));
        evutil_freeaddrinfo(res);
        if (!strv_contains(p->addresses, address))
                (void)strv_push(&p->addresses, address);
        peer_dial_address(p, address);
}

/* This node's address on the subnet of the peer's address, in host order; 0 when no port is on it. */
static uint32_t local_address_toward(struct peers *ps, const char *address)
{
        struct link_ports mine = { 0 };
        const char *local_addr = NULL;
        struct in_addr local = { 0 };

        (void)peer_ports_local(ps->links, &mine);
        if (!peer_port_for_address(&mine, address, true, &local_addr) || !local_addr ||
            !peer_ipv4_parse(local_addr, &local, NULL))
                local.s_addr = 0;
        link_ports_clear(&mine);
        return ntohl(local.s_addr);
}

/* Of two nodes that would each dial the other, one dials and the other waits: the connection the
 * lower node id starts is the one both keep, so a dial of the higher one meanwhile is a TLS
 * handshake thrown away (at 64 nodes, every node dialling all 63 made twice the handshakes the
 * mesh needs, on a CPU they all share). Before its first hello a static peer's id is unknown;
 * then the end with the lower address on the cable's subnet dials, which both ends tell alike.
 * The other waits DIAL_DEFER_HEARTBEATS (at least DIAL_DEFER_MIN_SEC) since the entry last
 * changed, then dials too: the other may not have it in its list. */
static bool peer_dial_defers(const struct peer *p, const char *address)
{
        struct peers *ps = p->owner;
        time_t grace = (time_t)(DIAL_DEFER_HEARTBEATS * ps->heartbeat_usec / 1000000);
        struct in_addr remote;
        bool is_higher;

        if (p->node_id[0]) {
                is_higher = strcmp(ps->node_id, p->node_id) > 0;
        } else {
                uint32_t local;

                if (!address || !peer_ipv4_parse(address, &remote, NULL))
                        return false;
                local = local_address_toward(ps, address);
                is_higher = local && local > ntohl(remote.s_addr);
        }
        return is_higher &&
               time(NULL) - p->since < (grace < DIAL_DEFER_MIN_SEC ? DIAL_DEFER_MIN_SEC : grace);
}

void peer_dial(struct peer *p)
{
        struct peers *ps = p->owner;
        size_t n = strv_length(p->addresses);
        struct in_addr ignored;

        if (!ps->tls || !ps->listener || p->conn || p->dialing || p->is_self)
                return;
        /* Not dialled now, the tick or a free dialling place dials it later: no retry is pending
         * for it. */
        if (ps->n_dialing >= MAX_DIALING ||
            peer_dial_defers(p, n ? p->addresses[p->next_address % n] : p->static_spec))
                return;
        if (n == 0 && p->static_spec && inet_pton(AF_INET, p->static_spec, &ignored) != 1 && ps->dns) {
                struct evutil_addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };

                /* Names resolve without blocking the loop; the answer dials. */
                evdns_getaddrinfo(ps->dns, p->static_spec, NULL, &hints, on_resolved, p);
                return;
        }
        if (n == 0)
                return;
        peer_dial_address(p, p->addresses[p->next_address++ % n]);
}

void peer_on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *addr, int len,
                    void *userdata)
{
        struct peers *ps = userdata;
        struct sockaddr_in local = { 0 };
        socklen_t local_len = sizeof(local);
        char remote_s[64], local_s[64];
        struct link_ports mine = { 0 };
        struct peer_conn *c;
        bool on_fabric;

        peer_format_sockaddr((struct sockaddr_in *)addr, remote_s, sizeof(remote_s));
        if (getsockname(fd, (struct sockaddr *)&local, &local_len) < 0) {
                close(fd);
                return;
        }
        peer_format_sockaddr(&local, local_s, sizeof(local_s));
        /* The peer channel lives on the fabric: a connection to another address of this host is
         * not for us. */
        (void)peer_ports_local(ps->links, &mine);
        on_fabric = peer_port_for_address(&mine, local_s, false, NULL) != NULL;
        link_ports_clear(&mine);
        if (!on_fabric) {
                peer_log_inbound_reject(ps, remote_s,
                                        "connected to an address that is not on a fabric port");
                close(fd);
                return;
        }
        if (ps->n_pending >= MAX_PENDING_INBOUND) {
                peer_log_inbound_reject(ps, remote_s, "too many connections still in their handshake");
                close(fd);
                return;
        }
        c = peer_session_new(ps, fd, false, NULL);
        if (!c)
                return;
        snprintf(c->remote, sizeof(c->remote), "%s", remote_s);
        snprintf(c->local, sizeof(c->local), "%s", local_s);
}
