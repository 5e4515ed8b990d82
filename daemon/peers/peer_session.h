/*
 * The peer protocol on one connection: the hello that names the peer (and settles which of two
 * connections between the same nodes stays), heartbeats that keep it up and refresh its ports,
 * other messages handed on, and what the end of a connection means for its peer (down, rejected,
 * a redial after the backoff).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "peer_conn.h"
#include "peer_table.h"

#define HELLO_TIMEOUT_SEC 5
/* How long a connection replaced by a duplicate is still read: what the peer sent on it before
 * it learned of the other one arrives, instead of being lost with it. */
#define RETIRE_GRACE_SEC    5
#define MAX_PENDING_INBOUND 64
/* Dials in their handshake at once: a node that finds 63 peers at start does not begin 63 TLS
 * handshakes in one turn of the loop, each one's deadline running while the others take the CPU;
 * the rest are dialled as places free. */
#define MAX_DIALING 16
/* Of two nodes, the one with the higher node id (the higher address on their cable before the id
 * is known) leaves the other this many heartbeats to dial first: the connection the lower one
 * starts is the one both keep, so a dial of the higher one meanwhile would be a handshake thrown
 * away. Past it this node dials too (the other may not know it). */
#define DIAL_DEFER_HEARTBEATS 3
/* And at least this long (whole seconds of time(), so 2 s at the least): more than a refused
 * dial's retry (REFUSED_RETRY_MAX_MS and its jitter), so that a node which starts after its
 * lower peers is dialled by them before it dials them. */
#define DIAL_DEFER_MIN_SEC 3

/* A connection on fd (taken over) of the table, for p when dialling; NULL without memory. */
struct peer_conn *peer_session_new(struct peers *ps, int fd, bool outbound, struct peer *p);
/* Adds c (its transport set up by the caller) to the table's connections. */
void peer_session_attach(struct peers *ps, struct peer_conn *c, struct peer *p);
void peer_session_free(struct peer_conn *c);
/* Ends a connection; reason NULL means quietly (a duplicate being dropped). */
void peer_session_close(struct peer_conn *c, const char *reason);
/* Ends every connection of the table (the key they were made with is gone), each up peer down
 * with why as its error, and lets every peer be dialled at the next tick; returns how many peers
 * were up. */
unsigned peer_session_close_all(struct peers *ps, const char *why);
/* Handles one line the peer sent (without its newline); on a protocol error, a duplicate or a
 * connection to itself the connection is closed (c freed) and a negative errno returned. */
int peer_session_receive(struct peer_conn *c, const char *line, size_t len);
void peer_session_send_heartbeat(struct peer_conn *c);

/* Frees an entry of the table with its connections. */
void peer_remove(struct peer *p);
/* Drops the entries learned from a hello alone that have been down for [peers] forget_after:
 * nothing dials them, and a node that dialled in once must not be kept for good. How many. */
unsigned peer_session_forget(struct peers *ps, time_t now);
