/*
 * A summary as a peer sends it: the input is its body, signed here with a fixed node key (id
 * FUZZ_ORIGIN, the origin the corpus names) as its origin would, so that what follows the
 * signature is reached. An input that is a JSON object with "sections" has them taken out and
 * carried beside the body as their texts, the body naming their digests in their place, as the
 * origin sends them (so the corpus reads as a whole summary); any other input is the body's
 * text as it is. Read strictly (summary_parse), then given to a cluster view as from a direct
 * peer, and the view's JSON, links and alerts made from whatever it kept, as the cluster method
 * would. Sends go nowhere; the view lives for one input. (A signature that fails, or a text
 * that is not its digest's, is the unit tests' concern: a fuzzer does not forge one.)
 */
#include <event2/event.h>
#include <stdlib.h>
#include <string.h>

#include "common/node_key.h"
#include "daemon/base/log.h"
#include "daemon/cluster/cluster.h"
#include "daemon/cluster/summary.h"
#include "fuzz.h"

#define SELF "0123456789abcdef0123456789abcdef"
#define PEER "fedcba9876543210fedcba9876543210"
/* The id of the key whose private bytes are 00 01 .. 1f. */
#define FUZZ_ORIGIN "56475aa75463474c0285df5dbf2bcab7"

static struct event_base *base;

static int drop(void *userdata, const char *peer_id, json_object *msg)
{
        (void)json_object_to_json_string(msg);
        json_object_put(msg);
        return 0;
}

static int hello_name(void *userdata, const char *peer_id, char *buf, size_t size)
{
        snprintf(buf, size, "peer");
        return 0;
}

/* The body's text for data, and the texts carried beside it (NULL: none): see above. */
static char *body_of(const uint8_t *data, size_t size, json_object **carried)
{
        json_tokener *tok = json_tokener_new_ex(SUMMARY_MAX_DEPTH + 2);
        json_object *o = tok ? json_tokener_parse_ex(tok, (const char *)data, (int)size) : NULL;
        json_object *sections = NULL, *body, *digests;
        char *text;

        json_tokener_free(tok);
        *carried = NULL;
        if (!json_object_is_type(o, json_type_object) ||
            !json_object_object_get_ex(o, "sections", &sections) ||
            !json_object_is_type(sections, json_type_object)) {
                json_object_put(o);
                return strndup((const char *)data, size);
        }
        body = json_object_new_object();
        *carried = json_object_new_object();
        json_object_object_foreach(o, key, value) {
                if (strcmp(key, "sections") != 0)
                        json_object_object_add(body, key, json_object_get(value));
        }
        json_object_object_foreach(sections, name, section) {
                json_object_object_add(*carried, name,
                                       json_object_new_string(json_object_to_json_string_ext(
                                               section, JSON_C_TO_STRING_PLAIN)));
        }
        digests = json_object_new_object();
        json_object_object_foreach(*carried, carried_name, carried_text) {
                char digest[SUMMARY_DIGEST_LEN + 1];

                summary_digest(json_object_get_string(carried_text),
                               (size_t)json_object_get_string_len(carried_text), digest);
                json_object_object_add(digests, carried_name, json_object_new_string(digest));
        }
        json_object_object_add(body, "digests", digests);
        text = strdup(json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
        json_object_put(body);
        json_object_put(o);
        return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct cluster_transport t = { .send = drop, .hello_name = hello_name };
        struct cluster *c = NULL;
        struct summary s;
        char why[256], sig[NODE_SIG_HEX_LEN + 1], pub[NODE_KEY_HEX_LEN + 1];
        static EVP_PKEY *key;
        json_object *m;
        json_object *carried;
        const char *text;
        char *body;
        int r;

        if (!base) {
                base = event_base_new();
                if (!base)
                        abort();
                log_set_max_level(LOG_EMERG);
                key = node_key_from_private_hex(
                        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
                        NODE_KEY_HEX_LEN);
                if (!key)
                        abort();
        }
        if (size > SUMMARY_MAX_BYTES + 1024)
                return 0;
        body = body_of(data, size, &carried);
        if (!body || node_key_sign(key, body, strlen(body), sig) < 0 || node_key_public_hex(key, pub) < 0) {
                free(body);
                json_object_put(carried);
                return 0;
        }
        m = json_object_new_object();
        json_object_object_add(m, "type", json_object_new_string(SUMMARY_TYPE));
        json_object_object_add(m, "body", json_object_new_string(body));
        json_object_object_add(m, "key", json_object_new_string(pub));
        json_object_object_add(m, "sig", json_object_new_string(sig));
        json_object_object_add(m, "age_ms", json_object_new_int(120));
        if (carried)
                json_object_object_add(m, "sections", carried);
        free(body);
        text = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
        r = summary_parse(text, strlen(text), &s, why, sizeof(why));
        json_object_put(m);
        if (r < 0)
                return 0;
        if (cluster_new(base, SELF, "self", &t, &c) < 0)
                abort();
        cluster_peer_up(c, PEER);
        cluster_peer_up(c, "00000000000000000000000000000001");
        if (cluster_receive(c, PEER, s.msg) == 0) {
                json_object *o = cluster_nodes_to_json(c, true), *nodes = json_object_object_get(o, "nodes");
                json_object *links = cluster_links_to_json(c), *alerts = cluster_alerts_to_json(c, nodes);

                (void)json_object_to_json_string(links);
                (void)json_object_to_json_string(alerts);
                json_object_put(links);
                json_object_put(alerts);
                json_object_put(o);
                json_object_put(cluster_get_section(c, s.origin, "doctor", NULL, NULL));
        }
        summary_clear(&s);
        json_object_put(s.msg);
        cluster_free(c);
        return 0;
}
