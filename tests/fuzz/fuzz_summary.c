/*
 * A summary as a peer sends it: the input is its body text, signed here with a fixed node key
 * (id FUZZ_ORIGIN, the origin the corpus names) as its origin would, so that what follows the
 * signature is reached; read strictly (summary_parse), then given to a cluster view as from a
 * direct peer, and the view's JSON, links and alerts made from whatever it kept, as the cluster
 * method would. Sends go nowhere; the view lives for one input. (A signature that fails is the
 * unit tests' concern: a fuzzer does not forge one.)
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct cluster_transport t = { .send = drop, .hello_name = hello_name };
        struct cluster *c = NULL;
        struct summary s;
        char why[256], sig[NODE_SIG_HEX_LEN + 1], pub[NODE_KEY_HEX_LEN + 1];
        static EVP_PKEY *key;
        json_object *m;
        const char *text;
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
        if (size > SUMMARY_MAX_BYTES + 1024 || node_key_sign(key, data, size, sig) < 0 ||
            node_key_public_hex(key, pub) < 0)
                return 0;
        m = json_object_new_object();
        json_object_object_add(m, "type", json_object_new_string(SUMMARY_TYPE));
        json_object_object_add(m, "body", json_object_new_string_len((const char *)data, (int)size));
        json_object_object_add(m, "key", json_object_new_string(pub));
        json_object_object_add(m, "sig", json_object_new_string(sig));
        json_object_object_add(m, "age_ms", json_object_new_int(120));
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
