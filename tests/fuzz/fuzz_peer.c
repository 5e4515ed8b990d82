/*
 * What a peer's records carry once the handshake is done: newline-separated JSON messages, the
 * hello first. Lines go to one inbound connection until it is closed (protocol error, duplicate,
 * itself), then to the next one, as a peer that reconnects would; the peer table lives for one
 * input. The connection's session binding is all zeros, and a hello line (an object of type
 * "hello" with a string node_id and instance) is signed for it here as its node would sign it, so
 * that what follows a hello is reached: one naming SELF_ID with this node's key (a clone), any
 * other with a peer's key, its node_id and key made that key's. (A hello that does not prove its
 * key is the unit tests' concern: a fuzzer does not forge a signature.)
 */
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "common/node_key.h"
#include "daemon/base/log.h"
#include "daemon/peers/peer_session.h"
#include "fuzz.h"

/* The id the corpus gives this node. */
#define SELF_ID "0123456789abcdef0123456789abcdef"

static struct event_base *base;
static EVP_PKEY *self_key, *peer_key;
static char self_id[33];

/* line, or a new text of it signed as a hello (see above), its length in *out_len; the caller
 * frees it. */
static char *signed_hello(const char *line, size_t len, size_t *out_len)
{
        char text[256], sig[NODE_SIG_HEX_LEN + 1], pub[NODE_KEY_HEX_LEN + 1], id[33];
        json_tokener *tok = json_tokener_new();
        json_object *m = tok ? json_tokener_parse_ex(tok, line, (int)len) : NULL, *v;
        const char *instance;
        EVP_PKEY *key;
        char *out = NULL;

        json_tokener_free(tok);
        if (m && json_object_is_type(m, json_type_object) && json_object_object_get_ex(m, "type", &v) &&
            json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), "hello") == 0 &&
            json_object_object_get_ex(m, "node_id", &v) && json_object_is_type(v, json_type_string) &&
            json_object_object_get_ex(m, "instance", &v) && json_object_is_type(v, json_type_string)) {
                instance = json_object_get_string(v);
                key = strcmp(json_object_get_string(json_object_object_get(m, "node_id")), SELF_ID) == 0
                              ? self_key
                              : peer_key;
                if (node_key_id(key, id) == 0 && node_key_public_hex(key, pub) == 0 &&
                    (size_t)snprintf(text, sizeof(text), "sparkd-hello\ndialer\n%064d\n%s\n%.40s\n", 0, id,
                                     instance) < sizeof(text) &&
                    node_key_sign(key, text, strlen(text), sig) == 0) {
                        json_object_object_add(m, "node_id", json_object_new_string(id));
                        json_object_object_add(m, "key", json_object_new_string(pub));
                        json_object_object_add(m, "sig", json_object_new_string(sig));
                        out = strdup(json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN));
                        *out_len = out ? strlen(out) : 0;
                }
        }
        json_object_put(m);
        if (!out) {
                out = malloc(len + 1);
                if (out) {
                        *out_len = len;
                        memcpy(out, line, len);
                        out[len] = '\0';
                }
        }
        return out;
}

static void on_deadline(evutil_socket_t fd, short what, void *userdata)
{
}

static void on_message(const char *node_id, const char *type, json_object *m, void *userdata)
{
        (void)json_object_to_json_string(m);
}

static struct peer_conn *inbound(struct peers *ps)
{
        struct peer_conn *c = calloc(1, sizeof(*c));

        if (!c)
                abort();
        c->deadline = evtimer_new(base, on_deadline, c);
        if (!c->deadline)
                abort();
        c->is_handshake_done = true; /* its binding all zeros */
        snprintf(c->remote, sizeof(c->remote), "10.0.0.2");
        snprintf(c->local, sizeof(c->local), "10.0.0.1");
        peer_session_attach(ps, c, NULL);
        return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct peers *ps = calloc(1, sizeof(*ps));
        struct peer_conn *c;
        const char *p = (const char *)data, *end = p + size;

        if (!base) {
                base = event_base_new();
                if (!base)
                        abort();
                log_set_max_level(LOG_EMERG);
                self_key = node_key_from_private_hex(
                        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                        NODE_KEY_HEX_LEN);
                peer_key = node_key_from_private_hex(
                        "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100",
                        NODE_KEY_HEX_LEN);
                if (!self_key || !peer_key || node_key_id(self_key, self_id) < 0)
                        abort();
        }
        if (!ps)
                abort();
        ps->base = base;
        snprintf(ps->node_id, sizeof(ps->node_id), "%s", self_id);
        ps->max_learned = 4; /* room for the peers an input names */
        snprintf(ps->name, sizeof(ps->name), "fuzz");
        LIST_INIT(&ps->peers);
        LIST_INIT(&ps->conns);
        ps->handlers[0] = (struct peers_handler){ .prefix = "probe-", .fn = on_message };
        c = inbound(ps);

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                size_t line_len = 0;
                char *line = signed_hello(p, len, &line_len);

                if (!line)
                        abort();
                if (peer_session_receive(c, line, line_len) < 0)
                        c = inbound(ps); /* closed and freed */
                free(line);
                p += len + 1;
        }

        while (!LIST_EMPTY(&ps->peers))
                peer_remove(LIST_FIRST(&ps->peers));
        while (!LIST_EMPTY(&ps->conns))
                peer_session_free(LIST_FIRST(&ps->conns));
        free(ps);
        return 0;
}
