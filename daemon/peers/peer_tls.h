/*
 * TLS 1.3 with an external pre-shared key (the cluster key) for the peer channel, through
 * OpenSSL: no certificates, no home-made crypto. Both ends derive nothing themselves: a peer
 * without the same key fails the PSK binder check and the handshake, and learns nothing.
 */
#pragma once

#include <openssl/ssl.h>

#include "common/cluster_key.h"

/* OpenSSL set up as the daemon uses it; before anything else in the process uses OpenSSL (the
 * cluster key's id is a digest), or it has no effect. */
int peer_tls_init(void);
/* One context for both roles; the key is copied in. */
SSL_CTX *peer_tls_context_new(const struct cluster_key *key);
void peer_tls_context_free(SSL_CTX *ctx);
