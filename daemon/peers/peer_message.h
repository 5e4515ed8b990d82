/*
 * The messages of the peer protocol itself: hello, the first line on a connection, naming the
 * node and its key, and heartbeat, sent every interval; both carry this node's fabric ports and,
 * when lldpd runs, its LLDP chassis (id and name) so the other end can match its LLDP neighbours
 * to nodes.
 * Any other type is for the module that registered with peers_set_message_handler().
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "peer_table.h"

/* 2: the hello carries the node's public key and proves it (common/node_key.h).
 * 3: after the TLS handshake the records are sparkd's (peer_record.h), agreed by ALPN
 *    (peer_tls.h's PEER_TLS_ALPN, which names this number). */
#define PEER_PROTO 3

/* The hello for a connection whose session binding (peer_conn_binding) is binding, signed with
 * this node's key; is_dialer when this node dialled. NULL when it cannot be signed. */
json_object *peer_message_hello(struct peers *ps, const unsigned char *binding, size_t binding_len,
                                bool is_dialer);
json_object *peer_message_heartbeat(struct peers *ps);

/* A hello as read; the strings and ports are borrowed from the message. */
struct peer_hello {
        const char *node_id;         /* 32 hex digits */
        const char *name;            /* a node name (text_is_node_name) */
        const char *version;         /* NULL when not given */
        const char *instance;        /* 32 hex digits, NULL from a sparkd that sends none */
        json_object *ports;          /* NULL when not given */
        struct peer_chassis chassis; /* its LLDP chassis; "" when not given */
        int64_t proto;
        const char *key; /* its public key, hex; NULL from a sparkd of protocol 1 */
        const char *sig; /* its proof, hex */
};

/* -EBADMSG for a hello this protocol cannot accept; one of an older protocol is read (key NULL)
 * for peer_message_prove_hello to refuse in words. */
int peer_message_read_hello(json_object *m, struct peer_hello *ret);
/* Whether the hello proves its node id: of this protocol, a key that names the id, and a
 * signature of this session's binding, the sender's role, id and instance by that key. < 0 with
 * why (a sentence) when not: a hello replayed from another session, or another node's, fails. */
int peer_message_prove_hello(const struct peer_hello *h, const unsigned char *binding, size_t binding_len,
                             bool sender_dialed, char *why, size_t why_size);
/* The LLDP chassis {id, name} a hello or heartbeat may carry ("" when it carries none);
 * -EBADMSG when it is there but not an object with a clean string id of at most 63 bytes; the
 * name is free text, cleaned and cut (text_check.h). */
int peer_message_read_chassis(json_object *m, struct peer_chassis *ret);
/* The ports a hello or heartbeat carries (NULL when none); -EBADMSG when they are not a list of
 * objects whose ifname is a netdev name and whose addresses are ADDRESS/PREFIX (text_check.h). */
int peer_message_read_ports(json_object *m, json_object **ret);
