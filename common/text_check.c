/* Checking outside text where it enters: node names, netdev names, free text (text_check.h). */
#include "text_check.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

bool text_is_node_name(const char *s)
{
        size_t len = s ? strlen(s) : 0;

        return len >= 1 && len <= TEXT_NODE_NAME_MAX && strspn(s, NAME_CHARS) == len;
}

bool text_is_netdev_name(const char *s)
{
        size_t len = s ? strlen(s) : 0;

        return len >= 1 && len <= TEXT_NETDEV_NAME_MAX && strspn(s, NAME_CHARS) == len &&
               strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

bool text_is_ip_prefix(const char *s)
{
        char buf[INET6_ADDRSTRLEN];
        const char *slash = s ? strchr(s, '/') : NULL;
        unsigned char addr[16];
        long prefix, max;
        char *end;

        if (!slash || slash == s || (size_t)(slash - s) >= sizeof(buf) || slash[1] < '0' || slash[1] > '9' ||
            strlen(slash + 1) > 3)
                return false;
        memcpy(buf, s, (size_t)(slash - s));
        buf[slash - s] = '\0';
        if (inet_pton(AF_INET, buf, addr) == 1)
                max = 32;
        else if (inet_pton(AF_INET6, buf, addr) == 1)
                max = 128;
        else
                return false;
        prefix = strtol(slash + 1, &end, 10);
        return !*end && prefix <= max;
}

size_t text_utf8_char(const char *s, size_t len, unsigned *cp)
{
        const unsigned char *u = (const unsigned char *)s;
        unsigned c, min;
        size_t n;

        if (len == 0)
                return 0;
        if (u[0] < 0x80) {
                *cp = u[0];
                return 1;
        }
        if (u[0] >= 0xc2 && u[0] <= 0xdf) {
                n = 2, c = u[0] & 0x1f, min = 0x80;
        } else if (u[0] >= 0xe0 && u[0] <= 0xef) {
                n = 3, c = u[0] & 0x0f, min = 0x800;
        } else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
                n = 4, c = u[0] & 0x07, min = 0x10000;
        } else
                return 0;
        if (len < n)
                return 0;
        for (size_t i = 1; i < n; i++) {
                if ((u[i] & 0xc0) != 0x80)
                        return 0;
                c = c << 6 | (u[i] & 0x3f);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
                return 0;
        *cp = c;
        return n;
}

bool text_is_utf8(const char *s, size_t len, size_t *bad_at)
{
        for (size_t i = 0; i < len;) {
                unsigned cp;
                size_t n = text_utf8_char(s + i, len - i, &cp);

                if (n == 0) {
                        if (bad_at)
                                *bad_at = i;
                        return false;
                }
                i += n;
        }
        return true;
}

bool text_is_control(unsigned cp)
{
        return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
               (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

bool text_is_clean(const char *s, size_t size)
{
        size_t len = strlen(s);

        if (len >= size)
                return false;
        for (size_t i = 0; i < len;) {
                unsigned cp;
                size_t n = text_utf8_char(s + i, len - i, &cp);

                if (n == 0 || text_is_control(cp))
                        return false;
                i += n;
        }
        return true;
}

size_t text_clean(char *dst, size_t size, const char *src, size_t len)
{
        size_t out = 0;

        for (size_t i = 0; i < len;) {
                unsigned cp;
                size_t n = text_utf8_char(src + i, len - i, &cp);
                const char *put = src + i;
                size_t put_len = n;

                if (n == 0) {
                        put = "?", put_len = 1, n = 1;
                } else if (cp == '\t' || cp == '\n' || cp == '\r') {
                        put = " ", put_len = 1;
                } else if (text_is_control(cp)) {
                        put_len = 0;
                }
                if (out + put_len >= size)
                        break;
                memcpy(dst + out, put, put_len);
                out += put_len;
                i += n;
        }
        dst[out] = '\0';
        return out;
}
