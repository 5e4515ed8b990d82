/*
 * The peer channel's handshake: TLS 1.3 with an external pre-shared key (the cluster key),
 * through OpenSSL, with no certificates and no key exchange of our own. A peer without the same
 * key fails the PSK binder check and the handshake, and learns nothing. The records after it are
 * sealed with keys exported from it (peer_record.h).
 */
#pragma once

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <stdbool.h>

#include "common/cluster_key.h"

/* The ALPN name both ends offer and agree on: the peer protocol's version (peer_message.h's
 * PEER_PROTO), so that ends of different versions part at the handshake with a reason rather
 * than read each other's records as garbage. */
#define PEER_TLS_ALPN "sparkd/3"

/* OpenSSL set up as the daemon uses it; before anything else in the process uses OpenSSL (the
 * cluster key's id is a digest), or it has no effect. */
int peer_tls_init(void);
/* One context for both roles; the key is copied in. */
SSL_CTX *peer_tls_context_new(const struct cluster_key *key);
void peer_tls_context_free(SSL_CTX *ctx);
/* Whether ssl's completed handshake agreed on PEER_TLS_ALPN; false when the other end offered
 * or chose no ALPN, as the sparkd versions before it. */
bool peer_tls_agreed_version(SSL *ssl);
/* The context's cipher for the records of its connections (peer_records_derive), freed with it. */
EVP_CIPHER_CTX *peer_tls_record_cipher(SSL_CTX *ctx);
