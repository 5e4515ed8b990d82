/* The netplan writer fed a topology map whose other nodes say anything: nodes named like this
 * one, netdevs and addresses that are YAML, quotes, newlines or bytes that are not UTF-8. The
 * input drives the map: its first NUL-separated field picks, byte by byte, each link's two ends
 * (this node, a node invented under this node's name, two others) and MTU; the other fields are
 * the names, netdevs and addresses, used in turn. The file written for this node, parsed by
 * libyaml, must be one document: network: {version, ethernets: {NETDEV: {addresses: [IPv4/N],
 * mtu}}}, every NETDEV one of this host's own netdevs; printed for display (any node's netdevs),
 * every NETDEV a netdev name. A failure aborts. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/text_check.h"
#include "common/topology_netplan.h"
#include "fuzz.h"

#define SELF_ID "0123456789abcdef0123456789abcdef"

static char *const own[] = { "p0", "p1", "enp1s0f0np0", "bond0.100", NULL };
static const char *const ids[] = { SELF_ID, "0123456789abcdef0123456789abcde0",
                                   "0123456789abcdef0123456789abcde1", "0123456789abcdef0123456789abcde2" };

static void check(bool ok)
{
        if (!ok)
                abort();
}

static const char *scalar(yaml_document_t *d, yaml_node_t *n)
{
        check(n && n->type == YAML_SCALAR_NODE);
        (void)d;
        return (const char *)n->data.scalar.value;
}

static yaml_node_t *get(yaml_document_t *d, yaml_node_t *map, const char *key)
{
        check(map && map->type == YAML_MAPPING_NODE);
        for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++)
                if (strcmp(scalar(d, yaml_document_get_node(d, p->key)), key) == 0)
                        return yaml_document_get_node(d, p->value);
        return NULL;
}

static bool is_ipv4_prefix(const char *s)
{
        char buf[32];
        const char *slash = strchr(s, '/');
        struct in_addr a;
        char *end;
        long prefix;

        if (!slash || (size_t)(slash - s) >= sizeof(buf))
                return false;
        memcpy(buf, s, (size_t)(slash - s));
        buf[slash - s] = '\0';
        prefix = strtol(slash + 1, &end, 10);
        return inet_pton(AF_INET, buf, &a) == 1 && !*end && end > slash + 1 && prefix >= 0 && prefix <= 32;
}

static void check_yaml(const char *text, bool only_own, size_t entries)
{
        yaml_parser_t parser;
        yaml_document_t doc, extra;
        yaml_node_t *root, *ethernets;
        size_t keys = 0;

        check(yaml_parser_initialize(&parser));
        yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
        check(yaml_parser_load(&parser, &doc));
        root = yaml_document_get_root_node(&doc);
        check(root && root->type == YAML_MAPPING_NODE &&
              root->data.mapping.pairs.top - root->data.mapping.pairs.start == 1);
        ethernets = get(&doc, get(&doc, root, "network"), "ethernets");
        check(strcmp(scalar(&doc, get(&doc, get(&doc, root, "network"), "version")), "2") == 0);
        check(ethernets && ethernets->type == YAML_MAPPING_NODE);
        for (yaml_node_pair_t *p = ethernets->data.mapping.pairs.start;
             p < ethernets->data.mapping.pairs.top; p++) {
                const char *netdev = scalar(&doc, yaml_document_get_node(&doc, p->key));
                yaml_node_t *v = yaml_document_get_node(&doc, p->value),
                            *addresses = get(&doc, v, "addresses");

                check(text_is_netdev_name(netdev));
                if (only_own) {
                        bool is_own = false;

                        for (char *const *o = own; *o; o++)
                                is_own |= strcmp(*o, netdev) == 0;
                        check(is_own);
                }
                check(v->data.mapping.pairs.top - v->data.mapping.pairs.start <= 2);
                for (yaml_node_pair_t *q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top; q++) {
                        const char *key = scalar(&doc, yaml_document_get_node(&doc, q->key));

                        check(strcmp(key, "addresses") == 0 || strcmp(key, "mtu") == 0);
                }
                check(addresses && addresses->type == YAML_SEQUENCE_NODE);
                for (yaml_node_item_t *i = addresses->data.sequence.items.start;
                     i < addresses->data.sequence.items.top; i++)
                        check(is_ipv4_prefix(scalar(&doc, yaml_document_get_node(&doc, *i))));
                keys++;
        }
        check(keys == entries);
        /* nothing after the one document */
        check(yaml_parser_load(&parser, &extra));
        check(!yaml_document_get_root_node(&extra));
        yaml_document_delete(&extra);
        yaml_document_delete(&doc);
        yaml_parser_delete(&parser);
}

static json_object *end_of(size_t node, const char *const *names, int mtu)
{
        json_object *e = json_object_new_object();

        json_object_object_add(e, "name", json_object_new_string(names[node]));
        json_object_object_add(e, "node_id", json_object_new_string(ids[node]));
        json_object_object_add(e, "mtu", json_object_new_int(mtu));
        return e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *field[64], *names[4];
        json_object *map, *nodes, *links;
        size_t n = 0, next = 1, len;
        char *text;

        if (size > 16384)
                return 0;
        text = malloc(size + 1);
        check(text != NULL);
        memcpy(text, data, size);
        text[size] = '\0';
        for (char *p = text; n < 64 && p <= text + size; p += strlen(p) + 1)
                field[n++] = p;
#define FIELD() (n > 1 ? field[1 + (next++ - 1) % (n - 1)] : "")
        names[0] = FIELD();
        names[1] = names[0]; /* invented under this node's name */
        names[2] = FIELD();
        names[3] = FIELD();
        map = json_object_new_object();
        nodes = json_object_new_array();
        links = json_object_new_array();
        for (size_t i = 0; i < 4; i++)
                json_object_array_add(nodes, end_of(i, names, 0));
        len = strlen(field[0]);
        for (size_t i = 0; i + 1 < len && i < 32; i += 2) {
                unsigned char c = (unsigned char)field[0][i], t = (unsigned char)field[0][i + 1];
                size_t a = c & 3, b = (c >> 2) & 3;
                json_object *l = json_object_new_object(), *twins = json_object_new_array();

                json_object_object_add(l, "a", end_of(a, names, c >> 4 ? 9000 : 0));
                json_object_object_add(l, "b", end_of(b, names, 1500));
                for (size_t k = 0; k < 1u + (t & 1u); k++) {
                        json_object *tw = json_object_new_object(), *addresses = json_object_new_object();

                        json_object_object_add(tw, "a", json_object_new_string(FIELD()));
                        json_object_object_add(tw, "b", json_object_new_string(FIELD()));
                        json_object_object_add(addresses, names[a], json_object_new_string(FIELD()));
                        json_object_object_add(addresses, names[b], json_object_new_string(FIELD()));
                        json_object_object_add(tw, "addresses", addresses);
                        json_object_array_add(twins, tw);
                }
                json_object_object_add(l, "twin_subnets", twins);
                json_object_array_add(links, l);
        }
        json_object_object_add(map, "nodes", nodes);
        json_object_object_add(map, "links", links);
        for (int only_own = 0; only_own < 2; only_own++) {
                struct topology_netplan plan;
                char why[640], *yaml;

                if (topology_netplan_of(map, SELF_ID, only_own ? own : NULL, &plan, why, sizeof(why)) < 0)
                        continue;
                yaml = topology_netplan_yaml(&plan);
                check(yaml != NULL);
                check_yaml(yaml, only_own, plan.n_entries);
                free(yaml);
        }
        json_object_put(map);
        free(text);
        return 0;
}
