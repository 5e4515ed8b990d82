/* The peer channel's records: two ends of a real handshake (peer_tls.h, in memory) seal and
 * open what the other sent, and nothing else. */
#include <errno.h>
#include <openssl/err.h>

#include "common/macro.h"
#include "daemon/peers/peer_record.h"
#include "daemon/peers/peer_tls.h"
#include "test.h"

struct pair {
        SSL_CTX *ctx;
        SSL *client, *server;
        struct peer_records c, s;
        int client_done, server_done;
};

/* What one end wrote, to the other's input. */
static void shuttle(SSL *from, SSL *to)
{
        char buf[4096];
        int n;

        while ((n = BIO_read(SSL_get_wbio(from), buf, sizeof(buf))) > 0)
                BIO_write(SSL_get_rbio(to), buf, n);
}

static SSL *end_new(SSL_CTX *ctx, bool is_client)
{
        SSL *ssl = SSL_new(ctx);

        SSL_set_bio(ssl, BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
        if (is_client)
                SSL_set_connect_state(ssl);
        else
                SSL_set_accept_state(ssl);
        return ssl;
}

/* Runs the handshake of p's two ends to its end: 0 when both completed it. */
static int handshake(struct pair *p)
{
        for (int i = 0; i < 10 && (p->client_done != 1 || p->server_done != 1); i++) {
                if (p->client_done != 1)
                        p->client_done = SSL_do_handshake(p->client);
                shuttle(p->client, p->server);
                if (p->server_done != 1)
                        p->server_done = SSL_do_handshake(p->server);
                shuttle(p->server, p->client);
        }
        return p->client_done == 1 && p->server_done == 1 ? 0 : -EPROTO;
}

static void pair_open(struct pair *p, uint8_t key_byte)
{
        struct cluster_key key;

        memset(p, 0, sizeof(*p));
        memset(key.bytes, key_byte, sizeof(key.bytes));
        snprintf(key.id, sizeof(key.id), "test");
        p->ctx = peer_tls_context_new(&key);
        CHECK(p->ctx != NULL);
        p->client = end_new(p->ctx, true);
        p->server = end_new(p->ctx, false);
        CHECK(handshake(p) == 0);
        CHECK(peer_tls_agreed_version(p->client));
        CHECK(peer_tls_agreed_version(p->server));
        CHECK(peer_records_derive(&p->c, p->client, true, peer_tls_record_cipher(p->ctx)) == 0);
        CHECK(peer_records_derive(&p->s, p->server, false, peer_tls_record_cipher(p->ctx)) == 0);
}

static void pair_close(struct pair *p)
{
        SSL_free(p->client);
        SSL_free(p->server);
        SSL_CTX_free(p->ctx);
}

static int seal_text(struct peer_records *r, const char *text, size_t len, struct evbuffer *out)
{
        const struct iovec iov = { .iov_base = (void *)text, .iov_len = len };

        return peer_records_seal(r, &iov, 1, out);
}

/* Each way, a line and a message of three records, in parts as a sender gives them. */
static void test_round_trip(void)
{
        struct pair p;
        struct evbuffer *wire = evbuffer_new(), *plain = evbuffer_new();
        static char big[40000];
        const struct iovec parts[] = { { .iov_base = big, .iov_len = sizeof(big) },
                                       { .iov_base = "\n", .iov_len = 1 } };

        pair_open(&p, 1);
        for (size_t i = 0; i < sizeof(big); i++)
                big[i] = (char)('a' + i % 26);
        CHECK(seal_text(&p.c, "{\"type\":\"hello\"}\n", 17, wire) == 0);
        CHECK(peer_records_seal(&p.c, parts, 2, wire) == 0);
        CHECK(p.c.send.seq == 4); /* 40001 bytes in records of 16 KiB at most */
        CHECK(evbuffer_get_length(wire) == 17 + 40001 + 4 * (PEER_RECORD_HEADER_LEN + PEER_RECORD_TAG_LEN));
        CHECK(peer_records_open(&p.s, wire, plain) == 0);
        CHECK(evbuffer_get_length(wire) == 0);
        CHECK(evbuffer_get_length(plain) == 17 + 40001);
        CHECK(memcmp(evbuffer_pullup(plain, 17), "{\"type\":\"hello\"}\n", 17) == 0);
        evbuffer_drain(plain, 17);
        CHECK(memcmp(evbuffer_pullup(plain, sizeof(big)), big, sizeof(big)) == 0);
        evbuffer_drain(plain, evbuffer_get_length(plain));

        CHECK(seal_text(&p.s, "back\n", 5, wire) == 0);
        CHECK(peer_records_open(&p.c, wire, plain) == 0);
        CHECK(evbuffer_get_length(plain) == 5 && memcmp(evbuffer_pullup(plain, 5), "back\n", 5) == 0);
        evbuffer_free(wire);
        evbuffer_free(plain);
        pair_close(&p);
}

/* A record that comes a byte at a time opens once it is whole, not before. */
static void test_split_delivery(void)
{
        struct pair p;
        struct evbuffer *sealed = evbuffer_new(), *in = evbuffer_new(), *plain = evbuffer_new();
        size_t len;
        unsigned char *bytes;

        pair_open(&p, 2);
        CHECK(seal_text(&p.c, "one\n", 4, sealed) == 0);
        CHECK(seal_text(&p.c, "two\n", 4, sealed) == 0);
        len = evbuffer_get_length(sealed);
        bytes = evbuffer_pullup(sealed, -1);
        for (size_t i = 0; i < len; i++) {
                evbuffer_add(in, bytes + i, 1);
                CHECK(peer_records_open(&p.s, in, plain) == 0);
                if (i + 1 < len / 2)
                        CHECK(evbuffer_get_length(plain) == 0);
        }
        CHECK(evbuffer_get_length(plain) == 8 && memcmp(evbuffer_pullup(plain, 8), "one\ntwo\n", 8) == 0);
        evbuffer_free(sealed);
        evbuffer_free(in);
        evbuffer_free(plain);
        pair_close(&p);
}

/* A byte changed anywhere, the length included, and the record does not open. */
static void test_tampered(void)
{
        const size_t at[] = { 3, PEER_RECORD_HEADER_LEN, PEER_RECORD_HEADER_LEN + 5,
                              PEER_RECORD_HEADER_LEN + 10 + PEER_RECORD_TAG_LEN - 1 };

        for (size_t k = 0; k < ARRAY_SIZE(at); k++) {
                struct pair p;
                struct evbuffer *wire = evbuffer_new(), *plain = evbuffer_new();
                unsigned char *b;

                pair_open(&p, 3);
                CHECK(seal_text(&p.c, "0123456789", 10, wire) == 0);
                b = evbuffer_pullup(wire, -1);
                /* At 3 the length becomes 24, not 26: still a record's, so the tag is what tells. */
                b[at[k]] ^= 2;
                CHECK(peer_records_open(&p.s, wire, plain) == -EBADMSG);
                CHECK(evbuffer_get_length(plain) == 0);
                evbuffer_free(wire);
                evbuffer_free(plain);
                pair_close(&p);
        }
}

/* Records out of order, twice, back to their sender or into another session: none opens. */
static void test_order_and_session(void)
{
        struct pair p, q;
        struct evbuffer *a = evbuffer_new(), *b = evbuffer_new(), *copy = evbuffer_new(),
                        *plain = evbuffer_new();

        pair_open(&p, 4);
        pair_open(&q, 4);
        CHECK(seal_text(&p.c, "first\n", 6, a) == 0);
        CHECK(seal_text(&p.c, "second\n", 7, b) == 0);

        evbuffer_add_buffer_reference(copy, b);
        CHECK(peer_records_open(&p.s, copy, plain) == -EBADMSG); /* the second first */
        evbuffer_drain(copy, evbuffer_get_length(copy));
        evbuffer_add_buffer_reference(copy, a);
        CHECK(peer_records_open(&p.c, copy, plain) == -EBADMSG); /* reflected to its sender */
        evbuffer_drain(copy, evbuffer_get_length(copy));
        evbuffer_add_buffer_reference(copy, a);
        CHECK(peer_records_open(&q.s, copy, plain) == -EBADMSG); /* same key, another session */
        evbuffer_drain(copy, evbuffer_get_length(copy));

        evbuffer_add_buffer_reference(copy, a);
        CHECK(peer_records_open(&p.s, copy, plain) == 0);
        CHECK(evbuffer_get_length(plain) == 6);
        evbuffer_add_buffer_reference(copy, a);
        CHECK(peer_records_open(&p.s, copy, plain) == -EBADMSG); /* again */
        CHECK(evbuffer_get_length(plain) == 6);
        evbuffer_free(a);
        evbuffer_free(b);
        evbuffer_free(copy);
        evbuffer_free(plain);
        pair_close(&p);
        pair_close(&q);
}

/* A length over the limit is refused from its header alone, one under a tag's too. */
static void test_lengths(void)
{
        struct pair p;
        struct evbuffer *wire = evbuffer_new(), *plain = evbuffer_new();
        const unsigned char over[] = { 0, 0, 0x40, 0x11 }; /* 16 KiB + 17 */
        const unsigned char under[] = { 0, 0, 0, 15 };
        const unsigned char most[] = { 0, 0, 0x40, 0x10 }; /* 16 KiB + 16: waits for the rest */

        pair_open(&p, 5);
        evbuffer_add(wire, over, sizeof(over));
        CHECK(peer_records_open(&p.s, wire, plain) == -EMSGSIZE);
        evbuffer_drain(wire, evbuffer_get_length(wire));
        evbuffer_add(wire, under, sizeof(under));
        CHECK(peer_records_open(&p.s, wire, plain) == -EBADMSG);
        evbuffer_drain(wire, evbuffer_get_length(wire));
        evbuffer_add(wire, most, sizeof(most));
        CHECK(peer_records_open(&p.s, wire, plain) == 0);
        CHECK(evbuffer_get_length(wire) == sizeof(most) && evbuffer_get_length(plain) == 0);
        evbuffer_free(wire);
        evbuffer_free(plain);
        pair_close(&p);
}

/* A key that sealed its most records seals no more, not even part of a message. */
static void test_worn_key(void)
{
        struct pair p;
        struct evbuffer *wire = evbuffer_new(), *plain = evbuffer_new();
        static char two_records[PEER_RECORD_MAX_PLAIN + 1];

        pair_open(&p, 6);
        p.c.send.seq = PEER_RECORD_MAX_SEQ - 1;
        p.s.receive.seq = PEER_RECORD_MAX_SEQ - 1;
        CHECK(seal_text(&p.c, two_records, sizeof(two_records), wire) == -EOVERFLOW);
        CHECK(evbuffer_get_length(wire) == 0);
        CHECK(seal_text(&p.c, "last\n", 5, wire) == 0);
        CHECK(peer_records_open(&p.s, wire, plain) == 0 && evbuffer_get_length(plain) == 5);
        CHECK(seal_text(&p.c, "more\n", 5, wire) == -EOVERFLOW);

        /* A peer that goes on past it anyway. */
        p.c.send.seq = PEER_RECORD_MAX_SEQ - 1;
        CHECK(seal_text(&p.c, "over\n", 5, wire) == 0);
        CHECK(peer_records_open(&p.s, wire, plain) == -EOVERFLOW);
        evbuffer_free(wire);
        evbuffer_free(plain);
        pair_close(&p);
}

/* An end of another version: without ALPN the handshake completes but is not agreed; with
 * another name only, the server refuses it in the handshake. */
static void test_other_version(void)
{
        struct pair p;
        struct cluster_key key;
        static const unsigned char other[] = "\x08sparkd/9";
        unsigned long err, reason = 0;

        memset(&p, 0, sizeof(p));
        memset(key.bytes, 7, sizeof(key.bytes));
        snprintf(key.id, sizeof(key.id), "test");
        p.ctx = peer_tls_context_new(&key);
        p.client = end_new(p.ctx, true);
        p.server = end_new(p.ctx, false);
        CHECK(SSL_set_alpn_protos(p.client, NULL, 0) == 0);
        CHECK(handshake(&p) == 0);
        CHECK(!peer_tls_agreed_version(p.server));
        CHECK(!peer_tls_agreed_version(p.client));
        pair_close(&p);

        memset(&p, 0, sizeof(p));
        p.ctx = peer_tls_context_new(&key);
        p.client = end_new(p.ctx, true);
        p.server = end_new(p.ctx, false);
        CHECK(SSL_set_alpn_protos(p.client, other, sizeof(other) - 1) == 0);
        ERR_clear_error();
        CHECK(handshake(&p) < 0);
        while ((err = ERR_get_error()) != 0)
                if (!reason)
                        reason = (unsigned long)ERR_GET_REASON(err);
        CHECK(reason == SSL_R_NO_APPLICATION_PROTOCOL ||
              reason == SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL);
        pair_close(&p);
}

int main(void)
{
        CHECK(peer_tls_init() == 0);
        RUN(test_round_trip);
        RUN(test_split_delivery);
        RUN(test_tampered);
        RUN(test_order_and_session);
        RUN(test_lengths);
        RUN(test_worn_key);
        RUN(test_other_version);
        return test_result();
}
