/*
 * The peer table and the peer channel. Peers come from mDNS (discovery.c) and from [peers]
 * static; each is reached over TCP on a fabric address, through the local port on the same
 * subnet (so a triangle mesh uses a different port per peer), inside TLS 1.3 keyed by the
 * cluster key. After a hello each side sends heartbeats carrying its fabric ports (name,
 * addresses, MTU), so a peer that stops answering goes down and an MTU that differs at the two
 * ends of a cable is reported by both. Connections are retried with backoff.
 */
#pragma once

#include <openssl/evp.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "daemon/config/conf.h"
#include "daemon/host/links.h"

struct peers;

/* links gives the local fabric ports and addresses; node_id identifies this node, kept in
 * state_dir (named in the fix of a duplicate id). */
int peers_new(struct event_base *base, struct links *links, const char *node_id, const char *state_dir,
              struct peers **ret);
void peers_free(struct peers *peers);
/* The key (borrowed) whose id node_id is: every hello proves it (peer_message.h). */
void peers_set_node_key(struct peers *peers, EVP_PKEY *key);
/* (Re)reads the key, the port, the static peers and mDNS settings. Errors with the key are
 * logged and leave peering off until a reload fixes them; the daemon keeps running. */
int peers_configure(struct peers *peers, const struct sparkd_config *config);
/* A fabric link or address changed: the mDNS record is published again when it differs. */
void peers_fabric_changed(struct peers *peers);

json_object *peers_to_json(struct peers *peers);

/* Messages of types the peer module does not handle itself go to the handler registered for the
 * longest prefix of their type ("probe-" for probe set-up, one prefix per module that talks to
 * peers). Every handler also gets type "peer-up" (the hello is done; msg NULL) and "peer-down"
 * (the connection ended; msg NULL), so each module can greet or forget a peer. */
typedef void (*peers_message_fn)(const char *node_id, const char *type, json_object *msg, void *userdata);
#define PEERS_MAX_HANDLERS 8
/* -EEXIST when prefix has a handler already, -ENOSPC past PEERS_MAX_HANDLERS. */
int peers_add_message_handler(struct peers *peers, const char *prefix, peers_message_fn fn, void *userdata);
void peers_remove_message_handler(struct peers *peers, const char *prefix);
/* fn runs at every heartbeat tick, after the heartbeats are queued and before they are written:
 * what it sends to a peer then goes out with its heartbeat, in one write and one wakeup at the
 * other end. One hook; NULL removes it. */
void peers_set_tick_hook(struct peers *peers, void (*fn)(void *userdata), void *userdata);
/* This node's LLDP chassis (NULL id: not known), sent from the next heartbeat on. */
void peers_set_chassis(struct peers *peers, const char *id, const char *name);
/* What may wait to be sent to one peer; past it peers_send drops messages. */
#define PEERS_SEND_QUEUE_MAX (8 * 1024 * 1024)
/* Sends msg (taken over) to an up peer; -ENOTCONN when it is not up, -ENOBUFS when more than
 * PEERS_SEND_QUEUE_MAX bytes already wait for it (dropped, logged once a minute). */
int peers_send(struct peers *peers, const char *node_id, json_object *msg);
/* Sends msg (not taken over) to every up peer; the number of peers it was queued for. */
unsigned peers_broadcast(struct peers *peers, json_object *msg);

/* The name the peer with the whole id node_id gave in its hello, into buf; -ENOENT when no peer
 * has that id or it gave no name. */
int peers_hello_name(struct peers *peers, const char *node_id, char *buf, size_t size);
/* Whether the up peer node_id is slow: silent past two heartbeats while its host still
 * acknowledges what is sent (shown `slow` in `peers`). */
bool peers_is_slow(struct peers *peers, const char *node_id);

/* What a node means to send on the peer channel in a minute: a base and an allowance per up
 * peer. Heartbeats and alives take some 20 KiB per peer and minute; the rest is room for
 * changes. Over it, changes that may wait do (cluster.h); heartbeats, alives and answers do not. */
#define PEERS_BUDGET_BASE     (256 * 1024)
#define PEERS_BUDGET_PER_PEER (48 * 1024)
/* The budget for the peers up now, in bytes a minute. */
uint64_t peers_budget(struct peers *peers);
/* Whether a change that may wait is to wait now: the bytes queued to the peers in the last minute
 * are over the budget. Counted when it is (sends_deferred in peers_to_json). */
bool peers_budget_defers(struct peers *peers);
/* Finds a peer by name, node id (or a unique prefix of it) or address; NULL when none or more
 * than one. The JSON is that peer's as peers_to_json() lists it, kept in *all too (the caller
 * puts *all, NULL when none). */
json_object *peers_lookup(struct peers *peers, const char *what, json_object **all);
/* The node ids of the peers up now (a strv the caller frees; NULL when none, or without memory). */
char **peers_up_ids(struct peers *peers);
