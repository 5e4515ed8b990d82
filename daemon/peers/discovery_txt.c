/* The discovery record and its TXT encoding: what a node says about itself over mDNS. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strutil.h"
#include "common/text_check.h"
#include "discovery.h"

/* ---- TXT record codec ---- */

static bool is_node_id(const char *s)
{
        size_t n = 0;

        for (; s[n]; n++)
                if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')))
                        return false;
        return n == 32;
}

static bool is_ipv4(const char *s)
{
        struct in_addr a;

        return inet_pton(AF_INET, s, &a) == 1;
}

void discovery_record_clear(struct discovery_record *r)
{
        strv_free(r->addresses);
        *r = (struct discovery_record){ 0 };
}

int discovery_record_copy(struct discovery_record *dst, const struct discovery_record *src)
{
        _cleanup_strv_ char **addrs = calloc(1, sizeof(char *));

        if (!addrs)
                return -ENOMEM;
        for (char *const *a = src->addresses; a && *a; a++)
                if (strv_push(&addrs, *a) < 0)
                        return -ENOMEM;
        *dst = *src;
        dst->addresses = TAKE_PTR(addrs);
        return 0;
}

bool discovery_record_equal(const struct discovery_record *a, const struct discovery_record *b)
{
        size_t n = strv_length(a->addresses);

        if (a->proto != b->proto || a->port != b->port || strcmp(a->node_id, b->node_id) != 0 ||
            strcmp(a->name, b->name) != 0 || n != strv_length(b->addresses))
                return false;
        for (size_t i = 0; i < n; i++)
                if (strcmp(a->addresses[i], b->addresses[i]) != 0)
                        return false;
        return true;
}

static int push_item(char ***v, const char *s)
{
        if (strlen(s) > DISCOVERY_TXT_ITEM_MAX)
                return -E2BIG;
        return strv_push(v, s);
}

int discovery_txt_encode(const struct discovery_record *r, char ***txt)
{
        _cleanup_strv_ char **v = NULL;
        char item[DISCOVERY_TXT_ITEM_MAX + 64], *p;
        size_t n = strv_length(r->addresses);
        int k;

        if (!is_node_id(r->node_id) || !text_is_node_name(r->name) || r->port == 0 ||
            n > DISCOVERY_MAX_ADDRS)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (!is_ipv4(r->addresses[i]))
                        return -EINVAL;

        snprintf(item, sizeof(item), "v=%u", r->proto);
        if ((k = push_item(&v, item)) < 0)
                return k;
        snprintf(item, sizeof(item), "id=%s", r->node_id);
        if ((k = push_item(&v, item)) < 0)
                return k;
        snprintf(item, sizeof(item), "name=%s", r->name);
        if ((k = push_item(&v, item)) < 0)
                return k;
        /* 16 addresses of up to 15 characters can exceed one TXT string: E2BIG then. */
        p = stpcpy(item, "addrs=");
        for (size_t i = 0; i < n; i++) {
                if ((size_t)(p - item) + strlen(r->addresses[i]) + 2 > sizeof(item))
                        return -E2BIG;
                p = stpcpy(p, r->addresses[i]);
                if (i + 1 < n)
                        p = stpcpy(p, ",");
        }
        if ((k = push_item(&v, item)) < 0)
                return k;
        snprintf(item, sizeof(item), "port=%u", (unsigned)r->port);
        if ((k = push_item(&v, item)) < 0)
                return k;
        *txt = TAKE_PTR(v);
        return 0;
}

static int decode_addrs(const char *value, char ***ret)
{
        _cleanup_strv_ char **v = calloc(1, sizeof(char *));
        _cleanup_free_ char *copy = strdup(value);
        size_t n = 0;

        if (!v || !copy)
                return -ENOMEM;
        /* "addrs=" is a node without fabric addresses yet; "a,,b" or "a," is malformed. */
        for (char *s = copy, *comma; *value; s = comma + 1) {
                comma = strchr(s, ',');
                if (comma)
                        *comma = '\0';
                if (++n > DISCOVERY_MAX_ADDRS || !is_ipv4(s))
                        return -EBADMSG;
                if (strv_push(&v, s) < 0)
                        return -ENOMEM;
                if (!comma)
                        break;
        }
        *ret = TAKE_PTR(v);
        return 0;
}

int discovery_txt_decode(char *const *txt, struct discovery_record *out)
{
        static const char *const keys[] = { "v", "id", "name", "addrs", "port" };
        _cleanup_(discovery_record_clear) struct discovery_record r = { 0 };
        unsigned seen = 0;
        uint64_t u;
        int k;

        for (char *const *item = txt; item && *item; item++) {
                const char *eq = strchr(*item, '='), *value = eq ? eq + 1 : NULL;
                size_t keylen = eq ? (size_t)(eq - *item) : strlen(*item);
                int key = -1;

                for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
                        if (strlen(keys[i]) == keylen && strncmp(*item, keys[i], keylen) == 0)
                                key = (int)i;
                if (key < 0)
                        continue; /* a newer peer's key: ignored (forward compatible) */
                if (!value || (seen & (1u << key)))
                        return -EBADMSG; /* a key without value, or twice */
                seen |= 1u << key;

                switch (key) {
                case 0:
                        if (parse_uint64(value, 10, 0, UINT32_MAX, &u) < 0)
                                return -EBADMSG;
                        r.proto = (unsigned)u;
                        break;
                case 1:
                        if (!is_node_id(value))
                                return -EBADMSG;
                        memcpy(r.node_id, value, 33);
                        break;
                case 2:
                        if (!text_is_node_name(value))
                                return -EBADMSG;
                        memcpy(r.name, value, strlen(value) + 1);
                        break;
                case 3:
                        if ((k = decode_addrs(value, &r.addresses)) < 0)
                                return k;
                        break;
                case 4:
                        if (parse_uint64(value, 10, 1, UINT16_MAX, &u) < 0)
                                return -EBADMSG;
                        r.port = (uint16_t)u;
                        break;
                }
        }
        if (seen != (1u << ARRAY_SIZE(keys)) - 1)
                return -EBADMSG;
        *out = r;
        r = (struct discovery_record){ 0 };
        return 0;
}
