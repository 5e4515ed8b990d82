/*
 * The peer channel's records once its TLS 1.3 handshake is over: each direction has its own
 * AES-128-GCM key and IV, exported from that handshake (RFC 8446 7.5), and numbers its records
 * from 0, the number making the nonce as TLS 1.3 does (RFC 8446 5.3). A record is its length
 * (4 bytes, big-endian, authenticated) and the sealed bytes with their 16-byte tag.
 *
 * Why not TLS's own records: OpenSSL keeps a connection's SSL (some 8.5 KiB, most of it room for
 * pipelined records this channel never uses) and two cipher contexts for as long as it lives,
 * and a node keeps a connection to every other. At 64 nodes that was 0.6 MiB of each daemon's
 * 2.8 MiB heap. The handshake stays TLS's; what is done after it is what QUIC does with the keys
 * of its TLS handshake (RFC 9001 5): no primitive or key exchange of our own.
 */
#pragma once

#include <event2/buffer.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#define PEER_RECORD_LABEL "EXPORTER-sparkd-records"
/* The most a record carries; a longer message goes in several. As TLS's, so a peer can make
 * this node hold at most one such record's bytes unread. */
#define PEER_RECORD_MAX_PLAIN  (16 * 1024)
#define PEER_RECORD_HEADER_LEN 4
#define PEER_RECORD_TAG_LEN    16
/* The records one key seals before the connection is made anew: TLS 1.3's bound for AES-GCM
 * (2^24.5 full records, RFC 8446 5.5), rounded down. At a record a second that is 190 days. */
#define PEER_RECORD_MAX_SEQ (UINT64_C(1) << 24)

struct peer_record_key {
        unsigned char key[16];
        unsigned char iv[12];
        uint64_t seq; /* the next record's number */
};

struct peer_records {
        struct peer_record_key send, receive;
        EVP_CIPHER_CTX *cipher; /* borrowed: peer_records_cipher_new's, shared by connections */
};

/* A cipher context for peer_records_derive to lend: AES-128-GCM, rekeyed for each record, so
 * one serves every connection of a single-threaded process. */
EVP_CIPHER_CTX *peer_records_cipher_new(void);
/* Both directions' keys, from ssl's completed handshake; is_client says which end this is. */
int peer_records_derive(struct peer_records *r, SSL *ssl, bool is_client, EVP_CIPHER_CTX *cipher);
/* Wipes the keys. */
void peer_records_clear(struct peer_records *r);
/* Seals the n_iov parts, as one stream, in records at the end of out: 0, or -EOVERFLOW when the
 * send key has sealed PEER_RECORD_MAX_SEQ records (nothing written), or -ENOMEM/-EIO. */
int peer_records_seal(struct peer_records *r, const struct iovec *iov, size_t n_iov, struct evbuffer *out);
/* Opens each whole record at the front of in, appending what it carried to plain; a record not
 * yet whole stays in in. 0, or -EMSGSIZE (a length over PEER_RECORD_MAX_PLAIN), -EBADMSG (not
 * sealed with this connection's key, in this order), -EOVERFLOW (the peer's key is worn out),
 * -ENOMEM: the connection cannot go on. */
int peer_records_open(struct peer_records *r, struct evbuffer *in, struct evbuffer *plain);
