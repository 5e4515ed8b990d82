/*
 * One blocking end of the peer channel, for the test programs that speak the peer protocol to a
 * sparkd as a keyed node would: the TLS handshake with the cluster key, then the records
 * (daemon/peers/peer_record.h) both ways.
 */
#pragma once

#include <event2/buffer.h>
#include <netinet/in.h>
#include <openssl/ssl.h>
#include <sys/types.h>

#include "daemon/peers/peer_conn.h"
#include "daemon/peers/peer_record.h"

struct peer_client {
        int fd;
        unsigned char binding[PEER_CONN_BINDING_LEN]; /* what a hello signs (peer_conn_binding) */
        struct peer_records records;
        struct evbuffer *to_send, *received, *plain; /* sealed, sealed, opened */
};

/* Connects to to and completes the handshake, waiting at most timeout_sec for each step. 0 or a
 * negative errno; pc is then closed. */
int peer_client_connect(struct peer_client *pc, SSL_CTX *ctx, const struct sockaddr_in *to, int timeout_sec);
int peer_client_write(struct peer_client *pc, const void *data, size_t len);
/* At most size bytes the daemon sent, waiting for a record when none is opened yet: > 0, or 0 at
 * the end of the connection or a timeout, or -1 for a record that does not open. */
ssize_t peer_client_read(struct peer_client *pc, void *buf, size_t size);
/* Bytes opened and not read yet: a read returns them without waiting. */
size_t peer_client_pending(const struct peer_client *pc);
void peer_client_close(struct peer_client *pc);
