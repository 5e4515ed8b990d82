#include "node_key.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>

bool node_key_is_hex(const char *s, size_t n)
{
        return s && strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

static void to_hex(const unsigned char *bytes, size_t n, char *out)
{
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[bytes[i] >> 4];
                out[2 * i + 1] = digits[bytes[i] & 0xf];
        }
        out[2 * n] = '\0';
}

/* A lower-case hex digit's value, -1 for anything else. */
static int hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* n bytes from exactly 2n lower-case hex digits at s. A held node's peer ids are looked up this
 * way for every relay decision, hundreds of times a second. */
static int from_hex(const char *s, unsigned char *bytes, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                int hi = hex_digit(s[2 * i]), lo = hi < 0 ? -1 : hex_digit(s[2 * i + 1]);

                if (lo < 0)
                        return -EBADMSG;
                bytes[i] = (unsigned char)(hi << 4 | lo);
        }
        return 0;
}

int node_key_id_to_raw(const char *id, unsigned char raw[NODE_KEY_ID_RAW_LEN])
{
        if (strlen(id) != NODE_KEY_ID_LEN)
                return -EBADMSG;
        return from_hex(id, raw, NODE_KEY_ID_RAW_LEN);
}

EVP_PKEY *node_key_generate(void)
{
        EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
        EVP_PKEY *key = NULL;

        if (!ctx)
                return NULL;
        if (EVP_PKEY_keygen_init(ctx) <= 0 || EVP_PKEY_keygen(ctx, &key) <= 0)
                key = NULL;
        EVP_PKEY_CTX_free(ctx);
        return key;
}

EVP_PKEY *node_key_from_private_hex(const char *text, size_t len)
{
        unsigned char raw[NODE_KEY_RAW_LEN];

        if (len == NODE_KEY_HEX_LEN + 1 && text[NODE_KEY_HEX_LEN] == '\n')
                len--;
        EVP_PKEY *key;

        if (len != NODE_KEY_HEX_LEN || from_hex(text, raw, sizeof(raw)) < 0)
                return NULL;
        key = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw, sizeof(raw));
        OPENSSL_cleanse(raw, sizeof(raw));
        return key;
}

int node_key_private_hex(EVP_PKEY *key, char out[NODE_KEY_HEX_LEN + 1])
{
        unsigned char raw[NODE_KEY_RAW_LEN];
        size_t n = sizeof(raw);

        if (EVP_PKEY_get_raw_private_key(key, raw, &n) <= 0 || n != sizeof(raw))
                return -EINVAL;
        to_hex(raw, n, out);
        OPENSSL_cleanse(raw, sizeof(raw));
        return 0;
}

int node_key_public_hex(EVP_PKEY *key, char out[NODE_KEY_HEX_LEN + 1])
{
        unsigned char raw[NODE_KEY_RAW_LEN];
        size_t n = sizeof(raw);

        if (EVP_PKEY_get_raw_public_key(key, raw, &n) <= 0 || n != sizeof(raw))
                return -EINVAL;
        to_hex(raw, n, out);
        return 0;
}

int node_key_id_of(const char *public_hex, char id[NODE_KEY_ID_LEN + 1])
{
        unsigned char raw[NODE_KEY_RAW_LEN], digest[SHA256_DIGEST_LENGTH];

        if (!node_key_is_hex(public_hex, NODE_KEY_HEX_LEN) || from_hex(public_hex, raw, sizeof(raw)) < 0)
                return -EBADMSG;
        if (!EVP_Digest(raw, sizeof(raw), digest, NULL, EVP_sha256(), NULL))
                return -EIO;
        to_hex(digest, NODE_KEY_ID_LEN / 2, id);
        return 0;
}

int node_key_id(EVP_PKEY *key, char id[NODE_KEY_ID_LEN + 1])
{
        char public_hex[NODE_KEY_HEX_LEN + 1];
        int r = node_key_public_hex(key, public_hex);

        return r < 0 ? r : node_key_id_of(public_hex, id);
}

int node_key_sign(EVP_PKEY *key, const void *data, size_t len, char sig[NODE_SIG_HEX_LEN + 1])
{
        EVP_MD_CTX *md = EVP_MD_CTX_new();
        unsigned char raw[NODE_SIG_RAW_LEN];
        size_t n = sizeof(raw);
        int r = -EIO;

        if (!md)
                return -ENOMEM;
        if (EVP_DigestSignInit(md, NULL, NULL, NULL, key) > 0 &&
            EVP_DigestSign(md, raw, &n, data, len) > 0 && n == sizeof(raw)) {
                to_hex(raw, n, sig);
                r = 0;
        }
        EVP_MD_CTX_free(md);
        return r;
}

int node_key_verify(const char *public_hex, const void *data, size_t len, const char *sig)
{
        unsigned char raw_key[NODE_KEY_RAW_LEN], raw_sig[NODE_SIG_RAW_LEN];
        EVP_PKEY *key;
        EVP_MD_CTX *md;
        int r = -EKEYREJECTED;

        if (!node_key_is_hex(public_hex, NODE_KEY_HEX_LEN) || !node_key_is_hex(sig, NODE_SIG_HEX_LEN) ||
            from_hex(public_hex, raw_key, sizeof(raw_key)) < 0 ||
            from_hex(sig, raw_sig, sizeof(raw_sig)) < 0)
                return -EBADMSG;
        key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw_key, sizeof(raw_key));
        if (!key)
                return -EKEYREJECTED; /* not a point of the curve */
        md = EVP_MD_CTX_new();
        if (!md) {
                EVP_PKEY_free(key);
                return -ENOMEM;
        }
        if (EVP_DigestVerifyInit(md, NULL, NULL, NULL, key) > 0 &&
            EVP_DigestVerify(md, raw_sig, sizeof(raw_sig), data, len) == 1)
                r = 0;
        EVP_MD_CTX_free(md);
        EVP_PKEY_free(key);
        return r;
}
