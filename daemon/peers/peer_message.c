#include "peer_message.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/jsonrpc.h"
#include "common/node_key.h"
#include "common/text_check.h"
#include "config.h"
#include "peer_ports.h"

static json_object *message_new(struct peers *ps, const char *type)
{
        json_object *m = json_object_new_object();
        struct link_ports mine = { 0 };

        (void)peer_ports_local(ps->links, &mine);
        json_object_object_add(m, "type", json_object_new_string(type));
        json_object_object_add(m, "ports", peer_ports_to_json(&mine));
        link_ports_clear(&mine);
        if (ps->chassis.id[0]) {
                json_object *chassis = json_object_new_object();

                json_object_object_add(chassis, "id", json_object_new_string(ps->chassis.id));
                json_object_object_add(chassis, "name", json_object_new_string(ps->chassis.name));
                json_object_object_add(m, "chassis", chassis);
        }
        return m;
}

/* What a hello signs: its session, the sender's role in it, its node id and instance. */
static int hello_signed_text(const unsigned char *binding, size_t binding_len, bool sender_dialed,
                             const char *node_id, const char *instance, char *buf, size_t size)
{
        size_t at;
        int n;

        n = snprintf(buf, size, "sparkd-hello\n%s\n", sender_dialed ? "dialer" : "listener");
        if (n < 0 || (size_t)n + 2 * binding_len + 70 > size)
                return -ENOBUFS;
        at = (size_t)n;
        for (size_t i = 0; i < binding_len; i++, at += 2)
                snprintf(buf + at, size - at, "%02x", binding[i]);
        n = snprintf(buf + at, size - at, "\n%s\n%s\n", node_id, instance);
        return n < 0 || (size_t)n >= size - at ? -ENOBUFS : (int)(at + (size_t)n);
}

json_object *peer_message_hello(struct peers *ps, const unsigned char *binding, size_t binding_len,
                                bool is_dialer)
{
        char text[256], sig[NODE_SIG_HEX_LEN + 1];
        int len = hello_signed_text(binding, binding_len, is_dialer, ps->node_id, ps->instance, text,
                                    sizeof(text));
        json_object *m;

        if (len < 0 || !ps->node_key || node_key_sign(ps->node_key, text, (size_t)len, sig) < 0)
                return NULL;
        m = message_new(ps, "hello");
        json_object_object_add(m, "key", json_object_new_string(ps->public_key));
        json_object_object_add(m, "sig", json_object_new_string(sig));

        json_object_object_add(m, "proto", json_object_new_int(PEER_PROTO));
        json_object_object_add(m, "node_id", json_object_new_string(ps->node_id));
        json_object_object_add(m, "instance", json_object_new_string(ps->instance));
        json_object_object_add(m, "name", json_object_new_string(ps->name));
        json_object_object_add(m, "version", json_object_new_string(SPARKD_VERSION));
        json_object_object_add(m, "key_id", json_object_new_string(ps->key_id));
        return m;
}

json_object *peer_message_heartbeat(struct peers *ps)
{
        return message_new(ps, "heartbeat");
}

/* One port of a peer's list: {ifname: a netdev name, addresses: ["ADDRESS/PREFIX"], ...}. */
static bool is_port(json_object *port)
{
        json_object *v;

        if (!json_object_is_type(port, json_type_object))
                return false;
        if (json_object_object_get_ex(port, "ifname", &v) &&
            (!json_object_is_type(v, json_type_string) || !text_is_netdev_name(json_object_get_string(v))))
                return false;
        if (!json_object_object_get_ex(port, "addresses", &v) || !v)
                return true;
        if (!json_object_is_type(v, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(v); i++) {
                json_object *a = json_object_array_get_idx(v, i);

                if (!json_object_is_type(a, json_type_string) ||
                    !text_is_ip_prefix(json_object_get_string(a)))
                        return false;
        }
        return true;
}

int peer_message_read_ports(json_object *m, json_object **ret)
{
        json_object *ports = NULL;

        if (json_object_object_get_ex(m, "ports", &ports) && ports) {
                if (!json_object_is_type(ports, json_type_array))
                        return -EBADMSG;
                for (size_t i = 0; i < json_object_array_length(ports); i++)
                        if (!is_port(json_object_array_get_idx(ports, i)))
                                return -EBADMSG;
        }
        *ret = ports;
        return 0;
}

int peer_message_read_chassis(json_object *m, struct peer_chassis *ret)
{
        json_object *chassis;
        const char *id = NULL, *name = NULL;

        *ret = (struct peer_chassis){ 0 };
        /* Older sparkd, or no lldpd at the other end: no chassis. */
        if (!json_object_object_get_ex(m, "chassis", &chassis) || !chassis)
                return 0;
        if (!json_object_is_type(chassis, json_type_object) ||
            jsonrpc_param_string(chassis, "id", &id) <= 0 || !text_is_clean(id, sizeof(ret->id)) ||
            jsonrpc_param_string(chassis, "name", &name) < 0)
                return -EBADMSG;
        snprintf(ret->id, sizeof(ret->id), "%s", id);
        /* The peer's lldpd's system name: free text, made clean and cut rather than refused. */
        text_clean(ret->name, sizeof(ret->name), name ? name : "", name ? strlen(name) : 0);
        return 0;
}

static bool is_hex_id(const char *s)
{
        return strlen(s) == 32 && strspn(s, "0123456789abcdef") == 32;
}

int peer_message_read_hello(json_object *m, struct peer_hello *ret)
{
        struct peer_hello h = { 0 };
        json_object *v;
        int r;

        if (!json_object_object_get_ex(m, "proto", &v) || !json_object_is_type(v, json_type_int) ||
            (h.proto = json_object_get_int64(v)) < 1 ||
            jsonrpc_param_string(m, "node_id", &h.node_id) <= 0 || !is_hex_id(h.node_id) ||
            jsonrpc_param_string(m, "name", &h.name) <= 0 || !text_is_node_name(h.name))
                return -EBADMSG;
        (void)jsonrpc_param_string(m, "version", &h.version);
        /* Older sparkd sends no instance; one that is there must be well formed. */
        r = jsonrpc_param_string(m, "instance", &h.instance);
        if (r < 0 || (r > 0 && !is_hex_id(h.instance)))
                return -EBADMSG;
        if (peer_message_read_ports(m, &h.ports) < 0 || peer_message_read_chassis(m, &h.chassis) < 0)
                return -EBADMSG;
        if (h.proto >= 2) {
                if (jsonrpc_param_string(m, "key", &h.key) <= 0 ||
                    !node_key_is_hex(h.key, NODE_KEY_HEX_LEN) ||
                    jsonrpc_param_string(m, "sig", &h.sig) <= 0 ||
                    !node_key_is_hex(h.sig, NODE_SIG_HEX_LEN) || !h.instance)
                        return -EBADMSG;
        }
        *ret = h;
        return 0;
}

int peer_message_prove_hello(const struct peer_hello *h, const unsigned char *binding, size_t binding_len,
                             bool sender_dialed, char *why, size_t why_size)
{
        char id[NODE_KEY_ID_LEN + 1], text[256];
        int len;

        if (h->proto < PEER_PROTO || !h->key) {
                snprintf(why, why_size,
                         "it speaks peer protocol %lld%s; this sparkd speaks %d, in which every node proves "
                         "its id with its key: run one sparkd version on every node",
                         (long long)h->proto, h->key ? "" : ", without a node key", PEER_PROTO);
                return -EPROTONOSUPPORT;
        }
        if (node_key_id_of(h->key, id) < 0)
                snprintf(id, sizeof(id), "?");
        if (strcmp(id, h->node_id) != 0) {
                snprintf(why, why_size, "its hello claims node id %s with a key that names node %s",
                         h->node_id, id);
                return -EKEYREJECTED;
        }
        len = hello_signed_text(binding, binding_len, sender_dialed, h->node_id, h->instance, text,
                                sizeof(text));
        if (len < 0 || node_key_verify(h->key, text, (size_t)len, h->sig) < 0) {
                snprintf(why, why_size,
                         "its hello's signature for node %s does not verify for this TLS session: a "
                         "hello replayed from another connection, or not made with that node's key",
                         h->node_id);
                return -EKEYREJECTED;
        }
        return 0;
}
