#include "peer_tls.h"

#include <errno.h>
#include <string.h>

#include "peer_record.h"

/* Names the key's purpose, so the same key could never be mistaken for another protocol's PSK. */
#define PSK_IDENTITY "sparkd-cluster-v1"

static int key_index = -1, cipher_index = -1;

/* PEER_TLS_ALPN as ALPN writes a list: its length, then its bytes. */
static const unsigned char alpn_list[] = "\x08" PEER_TLS_ALPN;

/* TLS_AES_128_GCM_SHA256: its hash must match the session's for the PSK to be usable. */
static const unsigned char tls13_aes128gcmsha256[] = { 0x13, 0x01 };

static SSL_SESSION *psk_session(SSL *ssl)
{
        const struct cluster_key *key = SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), key_index);
        const SSL_CIPHER *cipher = SSL_CIPHER_find(ssl, tls13_aes128gcmsha256);
        SSL_SESSION *s;

        if (!key || !cipher)
                return NULL;
        s = SSL_SESSION_new();
        if (!s)
                return NULL;
        if (!SSL_SESSION_set1_master_key(s, key->bytes, sizeof(key->bytes)) ||
            !SSL_SESSION_set_cipher(s, cipher) || !SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION)) {
                SSL_SESSION_free(s);
                return NULL;
        }
        return s;
}

static int use_session_cb(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
                          SSL_SESSION **sess)
{
        SSL_SESSION *s = psk_session(ssl);

        if (!s)
                return 0;
        if (md && md != SSL_CIPHER_get_handshake_digest(SSL_SESSION_get0_cipher(s))) {
                /* A HelloRetryRequest chose another hash: offer no PSK rather than a wrong one. */
                SSL_SESSION_free(s);
                *sess = NULL;
                return 1;
        }
        *id = (const unsigned char *)PSK_IDENTITY;
        *idlen = strlen(PSK_IDENTITY);
        *sess = s;
        return 1;
}

static int find_session_cb(SSL *ssl, const unsigned char *identity, size_t len, SSL_SESSION **sess)
{
        *sess = NULL;
        if (len != strlen(PSK_IDENTITY) || memcmp(identity, PSK_IDENTITY, len) != 0)
                return 1; /* unknown identity: the handshake fails without a PSK */
        *sess = psk_session(ssl);
        return *sess ? 1 : 0;
}

static void free_key(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
        OPENSSL_clear_free(ptr, sizeof(struct cluster_key));
}

static void free_cipher(void *parent, void *ptr, CRYPTO_EX_DATA *ad, int idx, long argl, void *argp)
{
        EVP_CIPHER_CTX_free(ptr);
}

/* The server's side of ALPN: this version's name or, when the client offers others only, an
 * alert (no_application_protocol) it can tell its owner about. OpenSSL has checked the client's
 * list before this is called. */
static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *out_len, const unsigned char *in,
                       unsigned int in_len, void *arg)
{
        unsigned char *selected = NULL;

        if (SSL_select_next_proto(&selected, out_len, alpn_list, sizeof(alpn_list) - 1, in, in_len) !=
            OPENSSL_NPN_NEGOTIATED)
                return SSL_TLSEXT_ERR_ALERT_FATAL;
        *out = selected;
        return SSL_TLSEXT_ERR_OK;
}

bool peer_tls_agreed_version(SSL *ssl)
{
        const unsigned char *p = NULL;
        unsigned len = 0;

        SSL_get0_alpn_selected(ssl, &p, &len);
        return p && len == alpn_list[0] && memcmp(p, alpn_list + 1, len) == 0;
}

EVP_CIPHER_CTX *peer_tls_record_cipher(SSL_CTX *ctx)
{
        return SSL_CTX_get_ex_data(ctx, cipher_index);
}

int peer_tls_init(void)
{
        /* The handshake's errors are logged by their reason (peer_conn.c), which only libssl's
         * strings name: libcrypto's, which OpenSSL loads by default with the first error state
         * (the first digest does), take some 360 KiB in every daemon and would name nothing a
         * peer connection logs. Only the first initialisation of a process decides. */
        return OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS | OPENSSL_INIT_LOAD_SSL_STRINGS, NULL)
                       ? 0
                       : -ENOMEM;
}

SSL_CTX *peer_tls_context_new(const struct cluster_key *key)
{
        SSL_CTX *ctx;
        struct cluster_key *copy;
        EVP_CIPHER_CTX *cipher;

        if (key_index < 0)
                key_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, free_key);
        if (cipher_index < 0)
                cipher_index = SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, free_cipher);
        ctx = SSL_CTX_new(TLS_method());
        if (!ctx)
                return NULL;
        cipher = peer_records_cipher_new();
        if (!cipher || !SSL_CTX_set_ex_data(ctx, cipher_index, cipher)) {
                EVP_CIPHER_CTX_free(cipher);
                SSL_CTX_free(ctx);
                return NULL;
        }
        copy = OPENSSL_malloc(sizeof(*copy));
        if (!copy || !SSL_CTX_set_ex_data(ctx, key_index, copy)) {
                OPENSSL_free(copy);
                SSL_CTX_free(ctx);
                return NULL;
        }
        memcpy(copy, key, sizeof(*copy));
        if (!SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) ||
            !SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256") ||
            SSL_CTX_set_alpn_protos(ctx, alpn_list, sizeof(alpn_list) - 1) != 0) {
                SSL_CTX_free(ctx);
                return NULL;
        }
        SSL_CTX_set_alpn_select_cb(ctx, select_alpn, NULL);
        /* No tickets: every connection proves the key again. */
        SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
        SSL_CTX_set_num_tickets(ctx, 0);
        SSL_CTX_set_psk_use_session_callback(ctx, use_session_cb);
        SSL_CTX_set_psk_find_session_callback(ctx, find_session_cb);
        return ctx;
}

void peer_tls_context_free(SSL_CTX *ctx)
{
        SSL_CTX_free(ctx);
}
