/*
 * A node's own identity: an Ed25519 key pair (OpenSSL libcrypto), whose public key names the node.
 * The node id is the first 16 bytes of SHA-256 of the raw public key as 32 lower-case hex digits,
 * so a node id cannot be claimed without its private key and no table of keys is kept anywhere.
 * Keys and signatures travel as lower-case hex: a public key 64 digits, a signature 128.
 */
#pragma once

#include <openssl/evp.h>
#include <stdbool.h>
#include <stddef.h>

#define NODE_KEY_RAW_LEN    32
#define NODE_KEY_HEX_LEN    (2 * NODE_KEY_RAW_LEN)
#define NODE_SIG_RAW_LEN    64
#define NODE_SIG_HEX_LEN    (2 * NODE_SIG_RAW_LEN)
#define NODE_KEY_ID_LEN     32 /* hex digits, the node id */
#define NODE_KEY_ID_RAW_LEN (NODE_KEY_ID_LEN / 2)

/* A new key pair; NULL without memory or entropy. */
EVP_PKEY *node_key_generate(void);
/* The private key from its NODE_KEY_HEX_LEN hex digits (as node_key_private_hex writes them,
 * a newline after them allowed); NULL when text is not that. */
EVP_PKEY *node_key_from_private_hex(const char *text, size_t len);
int node_key_private_hex(EVP_PKEY *key, char out[NODE_KEY_HEX_LEN + 1]);
int node_key_public_hex(EVP_PKEY *key, char out[NODE_KEY_HEX_LEN + 1]);
/* The node id a public key (hex) names; -EBADMSG when it is not NODE_KEY_HEX_LEN lower-case
 * hex digits. */
int node_key_id_of(const char *public_hex, char id[NODE_KEY_ID_LEN + 1]);
/* A node id's bytes from its NODE_KEY_ID_LEN hex digits: the form to hold many ids in; -EBADMSG
 * when id is not that. */
int node_key_id_to_raw(const char *id, unsigned char raw[NODE_KEY_ID_RAW_LEN]);
/* The node id of key's own public key. */
int node_key_id(EVP_PKEY *key, char id[NODE_KEY_ID_LEN + 1]);
/* Signs data (pure Ed25519, no digest) into hex. */
int node_key_sign(EVP_PKEY *key, const void *data, size_t len, char sig[NODE_SIG_HEX_LEN + 1]);
/* 0 when sig (hex) is public_hex's signature of data; -EBADMSG when either is not well-formed
 * hex of its length, -EKEYREJECTED when the signature does not verify. */
int node_key_verify(const char *public_hex, const void *data, size_t len, const char *sig);
/* Whether s is exactly n lower-case hex digits. */
bool node_key_is_hex(const char *s, size_t n);
