#include "peer_record.h"

#include <errno.h>
#include <string.h>

/* Both keys and IVs in one export: the client's, then the server's. */
#define KEY_MATERIAL_LEN (2 * (16 + 12))

EVP_CIPHER_CTX *peer_records_cipher_new(void)
{
        EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

        /* The cipher once; each record then sets only its key and nonce. */
        if (ctx && EVP_CipherInit_ex(ctx, EVP_aes_128_gcm(), NULL, NULL, NULL, 1) != 1) {
                EVP_CIPHER_CTX_free(ctx);
                return NULL;
        }
        return ctx;
}

int peer_records_derive(struct peer_records *r, SSL *ssl, bool is_client, EVP_CIPHER_CTX *cipher)
{
        unsigned char km[KEY_MATERIAL_LEN];
        const unsigned char *client = km, *server = km + KEY_MATERIAL_LEN / 2;
        struct peer_record_key *from_client = is_client ? &r->send : &r->receive;
        struct peer_record_key *from_server = is_client ? &r->receive : &r->send;

        if (SSL_export_keying_material(ssl, km, sizeof(km), PEER_RECORD_LABEL, strlen(PEER_RECORD_LABEL),
                                       NULL, 0, 0) != 1)
                return -EPROTO;
        memset(r, 0, sizeof(*r));
        memcpy(from_client->key, client, 16);
        memcpy(from_client->iv, client + 16, 12);
        memcpy(from_server->key, server, 16);
        memcpy(from_server->iv, server + 16, 12);
        OPENSSL_cleanse(km, sizeof(km));
        r->cipher = cipher;
        return 0;
}

void peer_records_clear(struct peer_records *r)
{
        OPENSSL_cleanse(r, sizeof(*r));
}

/* The record's nonce: the IV with the record's number in its last 8 bytes XORed in. */
static void nonce_of(const struct peer_record_key *k, unsigned char nonce[12])
{
        memcpy(nonce, k->iv, 12);
        for (int i = 0; i < 8; i++)
                nonce[11 - i] ^= (unsigned char)(k->seq >> (8 * i));
}

static void put_be32(unsigned char *p, uint32_t v)
{
        p[0] = (unsigned char)(v >> 24);
        p[1] = (unsigned char)(v >> 16);
        p[2] = (unsigned char)(v >> 8);
        p[3] = (unsigned char)v;
}

/* Seals len bytes taken from the parts at *iov (offset *off into it), moving both on. */
static int seal_one(struct peer_records *r, const struct iovec **iov, size_t *n_iov, size_t *off, size_t len,
                    struct evbuffer *out)
{
        struct evbuffer_iovec v;
        unsigned char nonce[12], *p;
        size_t total = PEER_RECORD_HEADER_LEN + len + PEER_RECORD_TAG_LEN, done = 0;
        int n;

        if (r->send.seq >= PEER_RECORD_MAX_SEQ)
                return -EOVERFLOW;
        if (evbuffer_reserve_space(out, (ev_ssize_t)total, &v, 1) < 1 || v.iov_len < total)
                return -ENOMEM;
        p = v.iov_base;
        put_be32(p, (uint32_t)(len + PEER_RECORD_TAG_LEN));
        nonce_of(&r->send, nonce);
        if (EVP_CipherInit_ex(r->cipher, NULL, NULL, r->send.key, nonce, 1) != 1 ||
            EVP_EncryptUpdate(r->cipher, NULL, &n, p, PEER_RECORD_HEADER_LEN) != 1)
                return -EIO;
        while (done < len) {
                size_t k = (*iov)->iov_len - *off;

                if (k > len - done)
                        k = len - done;
                if (EVP_EncryptUpdate(r->cipher, p + PEER_RECORD_HEADER_LEN + done, &n,
                                      (const unsigned char *)(*iov)->iov_base + *off, (int)k) != 1)
                        return -EIO;
                done += k;
                *off += k;
                if (*off == (*iov)->iov_len) {
                        (*iov)++;
                        (*n_iov)--;
                        *off = 0;
                }
        }
        if (EVP_EncryptFinal_ex(r->cipher, p + PEER_RECORD_HEADER_LEN + len, &n) != 1 ||
            EVP_CIPHER_CTX_ctrl(r->cipher, EVP_CTRL_AEAD_GET_TAG, PEER_RECORD_TAG_LEN,
                                p + PEER_RECORD_HEADER_LEN + len) != 1)
                return -EIO;
        v.iov_len = total;
        if (evbuffer_commit_space(out, &v, 1) < 0)
                return -ENOMEM;
        r->send.seq++;
        return 0;
}

int peer_records_seal(struct peer_records *r, const struct iovec *iov, size_t n_iov, struct evbuffer *out)
{
        size_t left = 0, off = 0;

        for (size_t i = 0; i < n_iov; i++)
                left += iov[i].iov_len;
        /* Enough numbers for the whole message, or none of it: a half-sent line cannot be read. */
        if ((left + PEER_RECORD_MAX_PLAIN - 1) / PEER_RECORD_MAX_PLAIN > PEER_RECORD_MAX_SEQ - r->send.seq)
                return -EOVERFLOW;
        while (n_iov && iov->iov_len == 0) {
                iov++;
                n_iov--;
        }
        while (left) {
                size_t len = left < PEER_RECORD_MAX_PLAIN ? left : PEER_RECORD_MAX_PLAIN;
                int r2 = seal_one(r, &iov, &n_iov, &off, len, out);

                if (r2 < 0)
                        return r2;
                left -= len;
        }
        return 0;
}

/* Opens the record of sealed_len bytes after the header at the front of in. */
static int open_one(struct peer_records *r, struct evbuffer *in, size_t sealed_len, struct evbuffer *plain)
{
        size_t len = sealed_len - PEER_RECORD_TAG_LEN;
        unsigned char *rec = evbuffer_pullup(in, (ev_ssize_t)(PEER_RECORD_HEADER_LEN + sealed_len));
        unsigned char nonce[12], tag[PEER_RECORD_TAG_LEN];
        struct evbuffer_iovec v;
        int n;

        if (!rec)
                return -ENOMEM;
        if (r->receive.seq >= PEER_RECORD_MAX_SEQ)
                return -EOVERFLOW;
        if (evbuffer_reserve_space(plain, (ev_ssize_t)(len ? len : 1), &v, 1) < 1 || v.iov_len < len)
                return -ENOMEM;
        memcpy(tag, rec + PEER_RECORD_HEADER_LEN + len, sizeof(tag));
        nonce_of(&r->receive, nonce);
        if (EVP_CipherInit_ex(r->cipher, NULL, NULL, r->receive.key, nonce, 0) != 1 ||
            EVP_DecryptUpdate(r->cipher, NULL, &n, rec, PEER_RECORD_HEADER_LEN) != 1 ||
            EVP_DecryptUpdate(r->cipher, v.iov_base, &n, rec + PEER_RECORD_HEADER_LEN, (int)len) != 1 ||
            EVP_CIPHER_CTX_ctrl(r->cipher, EVP_CTRL_AEAD_SET_TAG, PEER_RECORD_TAG_LEN, tag) != 1 ||
            EVP_DecryptFinal_ex(r->cipher, (unsigned char *)v.iov_base + len, &n) != 1) {
                /* What was written in the space is not committed: plain holds none of it. */
                OPENSSL_cleanse(v.iov_base, len);
                return -EBADMSG;
        }
        v.iov_len = len;
        if (evbuffer_commit_space(plain, &v, 1) < 0)
                return -ENOMEM;
        evbuffer_drain(in, PEER_RECORD_HEADER_LEN + sealed_len);
        r->receive.seq++;
        return 0;
}

int peer_records_open(struct peer_records *r, struct evbuffer *in, struct evbuffer *plain)
{
        for (;;) {
                unsigned char h[PEER_RECORD_HEADER_LEN];
                size_t sealed_len;
                int k;

                if (evbuffer_copyout(in, h, sizeof(h)) < (ev_ssize_t)sizeof(h))
                        return 0;
                sealed_len = (size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];
                /* Checked before waiting for the rest, so a peer cannot make this node hold more. */
                if (sealed_len > PEER_RECORD_MAX_PLAIN + PEER_RECORD_TAG_LEN)
                        return -EMSGSIZE;
                if (sealed_len < PEER_RECORD_TAG_LEN)
                        return -EBADMSG;
                if (evbuffer_get_length(in) < PEER_RECORD_HEADER_LEN + sealed_len)
                        return 0;
                k = open_one(r, in, sealed_len, plain);
                if (k < 0)
                        return k;
        }
}
