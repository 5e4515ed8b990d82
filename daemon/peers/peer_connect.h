/*
 * Opening connections of the peer channel: dialling a peer (its name resolved without blocking,
 * its addresses in turn, from the local port on the same subnet, so a triangle mesh uses a
 * different port per peer) and accepting one, only on an address of a fabric port.
 */
#pragma once

#include <event2/listener.h>

#include "peer_table.h"

/* Starts a connection to p unless one is up or under way (or peering is off). */
void peer_dial(struct peer *p);
/* The listener's callback; userdata is the struct peers. */
void peer_on_accept(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *addr, int len,
                    void *userdata);
