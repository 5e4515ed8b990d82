#include "node_id.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "common/macro.h"
#include "common/node_key.h"
#include "event.h"
#include "log.h"

int node_id_check(const char *s, size_t len)
{
        if (len == NODE_ID_LEN + 1 && s[NODE_ID_LEN] == '\n')
                len--;
        if (len != NODE_ID_LEN)
                return -EBADMSG;
        for (size_t i = 0; i < len; i++)
                if (!strchr("0123456789abcdef", s[i]))
                        return -EBADMSG;
        return 0;
}

int node_id_random(char id[NODE_ID_LEN + 1])
{
        unsigned char bytes[NODE_ID_LEN / 2];
        ssize_t n = getrandom(bytes, sizeof(bytes), 0);

        if (n != (ssize_t)sizeof(bytes))
                return n < 0 ? -errno : -EIO;
        for (size_t i = 0; i < sizeof(bytes); i++)
                snprintf(id + 2 * i, 3, "%02x", bytes[i]);
        return 0;
}

/* The key kept in the state directory: 0, -ENOENT when there is none (or it was damaged and
 * moved aside), another negative errno when it cannot be read. */
static int key_read(struct store *store, EVP_PKEY **ret)
{
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        int r = store_read(store, NODE_KEY_FILE, 4096, &data, &len);

        if (r == 0) {
                *ret = node_key_from_private_hex(data, len);
                OPENSSL_cleanse(data, len); /* the private key's text */
                if (*ret)
                        return 0;
        }
        if (r == 0 || r == -EFBIG || r == -EBADMSG) {
                struct log_field f[] = { { "file", NODE_KEY_FILE } };

                r = store_quarantine(store, NODE_KEY_FILE);
                event_emit(EVENT_STATE_QUARANTINED, f, ARRAY_SIZE(f),
                           "state file %s/%s is damaged (not the %d hex digits of an Ed25519 private key); "
                           "moved aside to %s.corrupt%s; this node gets a new key and a new node id",
                           store_path(store), NODE_KEY_FILE, NODE_KEY_HEX_LEN, NODE_KEY_FILE,
                           r < 0 ? " (failed)" : "");
                return -ENOENT;
        }
        if (r != -ENOENT)
                log_error("cannot read the node's key %s/%s: %s; fix its permissions or move it away "
                          "(the node then gets a new id)",
                          store_path(store), NODE_KEY_FILE, strerror(-r));
        return r;
}

static int key_make(struct store *store, EVP_PKEY **ret)
{
        char hex[NODE_KEY_HEX_LEN + 2];
        int r;

        *ret = node_key_generate();
        if (!*ret)
                return -ENOMEM;
        if (!store)
                return 0;
        r = node_key_private_hex(*ret, hex);
        if (r < 0)
                return r;
        strcat(hex, "\n");
        r = store_write_private(store, NODE_KEY_FILE, hex, strlen(hex));
        OPENSSL_cleanse(hex, sizeof(hex));
        if (r < 0)
                log_warning("cannot save the node's key in %s/%s: %s; it and the node id will change at "
                            "the next start",
                            store_path(store), NODE_KEY_FILE, strerror(-r));
        return 0;
}

/* node-id says the id, for people and scripts; one from before ids came from keys is replaced,
 * a damaged one moved aside first. */
static void id_file_update(struct store *store, const char *id)
{
        _cleanup_free_ char *data = NULL;
        size_t len = 0;
        char line[NODE_ID_LEN + 2];
        int r = store_read(store, NODE_ID_FILE, 4096, &data, &len);

        if (r == 0 && node_id_check(data, len) == 0 && strncmp(data, id, NODE_ID_LEN) == 0)
                return;
        if (r == 0 && node_id_check(data, len) == 0) {
                log_notice("node id %.32s becomes %s, the id this node's key (%s/%s) names: a node id "
                           "is now proven with its key; peers see a new node and forget the old one",
                           data, id, store_path(store), NODE_KEY_FILE);
        } else if (r == 0 || r == -EFBIG || r == -EBADMSG) {
                struct log_field f[] = { { "file", NODE_ID_FILE } };

                r = store_quarantine(store, NODE_ID_FILE);
                event_emit(EVENT_STATE_QUARANTINED, f, ARRAY_SIZE(f),
                           "state file %s/%s is damaged; moved aside to %s.corrupt%s (the id is %s's)",
                           store_path(store), NODE_ID_FILE, NODE_ID_FILE, r < 0 ? " (failed)" : "",
                           NODE_KEY_FILE);
        }
        snprintf(line, sizeof(line), "%s\n", id);
        r = store_write(store, NODE_ID_FILE, line, strlen(line));
        if (r < 0)
                log_warning("cannot save the node id in %s/%s: %s", store_path(store), NODE_ID_FILE,
                            strerror(-r));
}

int node_id_load(struct store *store, char id[NODE_ID_LEN + 1], EVP_PKEY **key)
{
        int r = store ? key_read(store, key) : -ENOENT;

        if (r == -ENOENT)
                r = key_make(store, key);
        if (r < 0)
                return r;
        r = node_key_id(*key, id);
        if (r < 0) {
                EVP_PKEY_free(*key);
                *key = NULL;
                return r;
        }
        if (store)
                id_file_update(store, id);
        return 0;
}
