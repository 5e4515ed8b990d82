/* The node's identity: an Ed25519 key pair made once and kept in the state directory
 * (common/node_key.h), and the node id its public key names, so that peers recognise a node across
 * restarts and renames and nobody else can speak as it. */
#pragma once

#include <openssl/evp.h>

#include "store.h"

#define NODE_ID_LEN   32         /* hex digits */
#define NODE_ID_FILE  "node-id"  /* in the state directory: the id, for people and scripts */
#define NODE_KEY_FILE "node-key" /* in the state directory, mode 0600: the private key in hex */

/* A fresh random id of 32 lower-case hex digits (node ids, and a process's instance id). */
int node_id_random(char id[NODE_ID_LEN + 1]);
/* Reads the node's key, or makes and saves a new one, and the id it names into id. A node-id
 * that names another id (a random one, from before ids came from keys) is replaced by the
 * key's, said once in the log. A damaged key file is moved aside and replaced (the node then has
 * a new id, said in an event naming the file); one that cannot be read is an error naming it.
 * With no store (state directory unusable) the key lives only as long as the process. */
int node_id_load(struct store *store, char id[NODE_ID_LEN + 1], EVP_PKEY **key);
/* Exposed for tests: is s exactly 32 lower-case hex digits, optionally followed by a newline. */
int node_id_check(const char *s, size_t len);
