/*
 * The messages of the peer protocol itself: hello, the first line on a connection, naming the
 * node and its key, and heartbeat, sent every interval; both carry this node's fabric ports and,
 * when lldpd runs, its LLDP chassis (id and name) so the other end can match its LLDP neighbours
 * to nodes.
 * Any other type is for the module that registered with peers_set_message_handler().
 */
#pragma once

#include <json-c/json.h>

#include "peer_table.h"

#define PEER_PROTO 1

json_object *peer_message_hello(struct peers *ps);
json_object *peer_message_heartbeat(struct peers *ps);

/* A hello as read; the strings and ports are borrowed from the message. */
struct peer_hello {
        const char *node_id;         /* 32 hex digits */
        const char *name;            /* a node name (text_is_node_name) */
        const char *version;         /* NULL when not given */
        const char *instance;        /* 32 hex digits, NULL from a sparkd that sends none */
        json_object *ports;          /* NULL when not given */
        struct peer_chassis chassis; /* its LLDP chassis; "" when not given */
};

/* -EBADMSG for a hello this protocol cannot accept. */
int peer_message_read_hello(json_object *m, struct peer_hello *ret);
/* The LLDP chassis {id, name} a hello or heartbeat may carry ("" when it carries none);
 * -EBADMSG when it is there but not an object with a clean string id of at most 63 bytes; the
 * name is free text, cleaned and cut (text_check.h). */
int peer_message_read_chassis(json_object *m, struct peer_chassis *ret);
/* The ports a hello or heartbeat carries (NULL when none); -EBADMSG when they are not a list of
 * objects whose ifname is a netdev name and whose addresses are ADDRESS/PREFIX (text_check.h). */
int peer_message_read_ports(json_object *m, json_object **ret);
