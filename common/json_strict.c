#include "json_strict.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

#define TOP_KEYS_MAX 64

struct raw_span {
        const char *start;
        size_t len;
};

/* One pass over the text as written, deciding everything json_strict_parse refuses: json-c's
 * strict mode changed from release to release (0.17 refuses integers past 64 bits, 0.18 control
 * characters in strings), so it is never asked to judge. A syntax, UTF-8 or depth error stops
 * the pass; an escaped NUL or an integer out of range is noted and the pass goes on, so that a
 * message that is not JSON at all is called that, whatever it holds. */
struct check {
        const char *text;
        size_t len;
        size_t pos;
        int max_depth;
        enum json_strict_error error; /* the error that stopped the pass */
        char stop_why[96];
        size_t nul_at; /* the first escaped NUL's offset + 1; 0: none */
        char number_out_of_range[48];
        size_t keys; /* members of every object, repeats included */
        /* the outermost object's keys as written, to name a repeated one */
        struct raw_span top_keys[TOP_KEYS_MAX];
        size_t n_top_keys;
};

static bool stop(struct check *c, enum json_strict_error error, const char *fmt, ...) _printf_(3, 4);

static bool stop(struct check *c, enum json_strict_error error, const char *fmt, ...)
{
        va_list ap;

        c->error = error;
        va_start(ap, fmt);
        vsnprintf(c->stop_why, sizeof(c->stop_why), fmt, ap);
        va_end(ap);
        return false;
}

/* What stands at the current offset, for an error message. */
static bool unexpected(struct check *c, const char *expected)
{
        unsigned char b;

        if (c->pos >= c->len)
                return stop(c, JSON_STRICT_SYNTAX, "the text ends where %s was expected", expected);
        b = (unsigned char)c->text[c->pos];
        if (b >= 0x20 && b < 0x7f)
                return stop(c, JSON_STRICT_SYNTAX, "'%c' at byte %zu where %s was expected", b, c->pos,
                            expected);
        return stop(c, JSON_STRICT_SYNTAX, "byte 0x%02x at byte %zu where %s was expected", b, c->pos,
                    expected);
}

static void skip_space(struct check *c)
{
        while (c->pos < c->len && strchr(" \t\r\n", c->text[c->pos]) && c->text[c->pos])
                c->pos++;
}

static bool is_digit(char ch)
{
        return ch >= '0' && ch <= '9';
}

static int hex_value(char ch)
{
        if (is_digit(ch))
                return ch - '0';
        if (ch >= 'a' && ch <= 'f')
                return ch - 'a' + 10;
        if (ch >= 'A' && ch <= 'F')
                return ch - 'A' + 10;
        return -1;
}

/* The length of the UTF-8 sequence at s (at most n bytes) as RFC 3629 allows it: no overlong
 * form (C0 80 would be a NUL no escape check sees), no surrogate, nothing past U+10FFFF; 0 when
 * the bytes are no such sequence. */
static size_t utf8_length(const unsigned char *s, size_t n)
{
        unsigned char lo = 0x80, hi = 0xbf;
        size_t len;

        if (s[0] >= 0xc2 && s[0] <= 0xdf)
                len = 2;
        else if (s[0] >= 0xe0 && s[0] <= 0xef)
                len = 3;
        else if (s[0] >= 0xf0 && s[0] <= 0xf4)
                len = 4;
        else
                return 0;
        if (s[0] == 0xe0)
                lo = 0xa0;
        else if (s[0] == 0xed)
                hi = 0x9f;
        else if (s[0] == 0xf0)
                lo = 0x90;
        else if (s[0] == 0xf4)
                hi = 0x8f;
        if (n < len || s[1] < lo || s[1] > hi)
                return 0;
        for (size_t i = 2; i < len; i++)
                if (s[i] < 0x80 || s[i] > 0xbf)
                        return 0;
        return len;
}

/* A string from its opening quote; its span (between the quotes) in *span. */
static bool check_string(struct check *c, struct raw_span *span)
{
        size_t start = ++c->pos;

        while (c->pos < c->len) {
                unsigned char b = (unsigned char)c->text[c->pos];

                if (b == '"') {
                        *span = (struct raw_span){ c->text + start, c->pos - start };
                        c->pos++;
                        return true;
                }
                if (b < 0x20)
                        return stop(c, JSON_STRICT_SYNTAX,
                                    "control character 0x%02x in a string at byte %zu (JSON escapes it)", b,
                                    c->pos);
                if (b >= 0x80) {
                        size_t n = utf8_length((const unsigned char *)c->text + c->pos, c->len - c->pos);

                        if (n == 0)
                                return stop(c, JSON_STRICT_UTF8, "bytes that are not UTF-8 at byte %zu",
                                            c->pos);
                        c->pos += n;
                        continue;
                }
                if (b != '\\') {
                        c->pos++;
                        continue;
                }
                if (c->pos + 1 >= c->len)
                        break;
                if (c->text[c->pos + 1] == 'u') {
                        unsigned code = 0;

                        for (size_t i = 2; i < 6; i++) {
                                int h = c->pos + i < c->len ? hex_value(c->text[c->pos + i]) : -1;

                                if (h < 0)
                                        return stop(c, JSON_STRICT_SYNTAX,
                                                    "\\u at byte %zu is not followed by 4 hex digits",
                                                    c->pos);
                                code = code * 16 + (unsigned)h;
                        }
                        if (code == 0 && !c->nul_at)
                                c->nul_at = c->pos + 1;
                        c->pos += 6;
                        continue;
                }
                if (!strchr("\"\\/bfnrt", c->text[c->pos + 1]) || !c->text[c->pos + 1])
                        return stop(c, JSON_STRICT_SYNTAX, "unknown escape at byte %zu", c->pos);
                c->pos += 2;
        }
        return stop(c, JSON_STRICT_SYNTAX, "the text ends inside a string that starts at byte %zu",
                    start - 1);
}

static bool integer_fits(const char *start, size_t len)
{
        char buf[48];

        if (len >= sizeof(buf))
                return false;
        memcpy(buf, start, len);
        buf[len] = '\0';
        errno = 0;
        if (buf[0] == '-')
                (void)strtoll(buf, NULL, 10);
        else
                (void)strtoull(buf, NULL, 10);
        return errno != ERANGE;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; an integer (no fraction, no exponent) must
 * fit in int64_t or, positive, in uint64_t: json-c would clamp it, or refuse it as not JSON. */
static bool check_number(struct check *c)
{
        size_t start = c->pos;
        bool is_integer = true;

        if (c->text[c->pos] == '-')
                c->pos++;
        if (c->pos >= c->len || !is_digit(c->text[c->pos]))
                return unexpected(c, "a digit");
        if (c->text[c->pos] == '0') {
                c->pos++;
                if (c->pos < c->len && is_digit(c->text[c->pos]))
                        return stop(c, JSON_STRICT_SYNTAX, "a number with a leading zero at byte %zu",
                                    start);
        } else {
                while (c->pos < c->len && is_digit(c->text[c->pos]))
                        c->pos++;
        }
        if (c->pos < c->len && c->text[c->pos] == '.') {
                is_integer = false;
                c->pos++;
                if (c->pos >= c->len || !is_digit(c->text[c->pos]))
                        return unexpected(c, "a digit after the decimal point");
                while (c->pos < c->len && is_digit(c->text[c->pos]))
                        c->pos++;
        }
        if (c->pos < c->len && (c->text[c->pos] == 'e' || c->text[c->pos] == 'E')) {
                is_integer = false;
                c->pos++;
                if (c->pos < c->len && (c->text[c->pos] == '+' || c->text[c->pos] == '-'))
                        c->pos++;
                if (c->pos >= c->len || !is_digit(c->text[c->pos]))
                        return unexpected(c, "a digit of the exponent");
                while (c->pos < c->len && is_digit(c->text[c->pos]))
                        c->pos++;
        }
        if (is_integer && !c->number_out_of_range[0] && !integer_fits(c->text + start, c->pos - start))
                snprintf(c->number_out_of_range, sizeof(c->number_out_of_range), "%.*s",
                         (int)(c->pos - start > 40 ? 40 : c->pos - start), c->text + start);
        return true;
}

static bool check_value(struct check *c, int depth);

static bool check_object(struct check *c, int depth)
{
        c->pos++;
        skip_space(c);
        if (c->pos < c->len && c->text[c->pos] == '}') {
                c->pos++;
                return true;
        }
        for (;;) {
                struct raw_span key;

                if (c->pos >= c->len || c->text[c->pos] != '"')
                        return unexpected(c, "a key in double quotes");
                if (!check_string(c, &key))
                        return false;
                c->keys++;
                if (depth == 0 && c->n_top_keys < TOP_KEYS_MAX)
                        c->top_keys[c->n_top_keys++] = key;
                skip_space(c);
                if (c->pos >= c->len || c->text[c->pos] != ':')
                        return unexpected(c, "':'");
                c->pos++;
                if (!check_value(c, depth + 1))
                        return false;
                skip_space(c);
                if (c->pos < c->len && c->text[c->pos] == '}') {
                        c->pos++;
                        return true;
                }
                if (c->pos >= c->len || c->text[c->pos] != ',')
                        return unexpected(c, "',' or '}'");
                c->pos++;
                skip_space(c);
        }
}

static bool check_array(struct check *c, int depth)
{
        c->pos++;
        skip_space(c);
        if (c->pos < c->len && c->text[c->pos] == ']') {
                c->pos++;
                return true;
        }
        for (;;) {
                if (!check_value(c, depth + 1))
                        return false;
                skip_space(c);
                if (c->pos < c->len && c->text[c->pos] == ']') {
                        c->pos++;
                        return true;
                }
                if (c->pos >= c->len || c->text[c->pos] != ',')
                        return unexpected(c, "',' or ']'");
                c->pos++;
        }
}

/* One value, nested in depth arrays and objects: as json-c counts, at most max_depth - 1. */
static bool check_value(struct check *c, int depth)
{
        static const char *const literals[] = { "true", "false", "null" };
        struct raw_span ignored;

        skip_space(c);
        if (c->pos >= c->len)
                return unexpected(c, "a value");
        if (depth >= c->max_depth)
                return stop(c, JSON_STRICT_DEPTH, "nested deeper than %d levels at byte %zu", c->max_depth,
                            c->pos);
        switch (c->text[c->pos]) {
        case '{':
                return check_object(c, depth);
        case '[':
                return check_array(c, depth);
        case '"':
                return check_string(c, &ignored);
        case '-':
        case '0' ... '9':
                return check_number(c);
        default:
                break;
        }
        for (size_t i = 0; i < ARRAY_SIZE(literals); i++) {
                size_t n = strlen(literals[i]);

                if (c->len - c->pos >= n && memcmp(c->text + c->pos, literals[i], n) == 0) {
                        c->pos += n;
                        return true;
                }
        }
        /* 'single quotes', NaN, Infinity, comments: json-c takes some, no other reader does */
        return unexpected(c, "a value");
}

/* Members of every object in the tree, as json-c kept them (one per distinct key). */
static size_t count_keys(json_object *o)
{
        size_t n = 0;

        if (json_object_is_type(o, json_type_object)) {
                json_object_object_foreach(o, key, value) {
                        (void)key;
                        n += 1 + count_keys(value);
                }
        } else if (json_object_is_type(o, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(o); i++)
                        n += count_keys(json_object_array_get_idx(o, i));
        }
        return n;
}

/* The outermost object's first key written twice, as written; NULL when the repeat is deeper
 * or spelled with other escapes. */
static const struct raw_span *repeated_top_key(const struct check *c)
{
        for (size_t i = 0; i < c->n_top_keys; i++)
                for (size_t j = 0; j < i; j++)
                        if (c->top_keys[i].len == c->top_keys[j].len &&
                            memcmp(c->top_keys[i].start, c->top_keys[j].start, c->top_keys[i].len) == 0)
                                return &c->top_keys[i];
        return NULL;
}

/* The tree of text, which the check found to be standard JSON, into *ret; -ENOMEM, or -EINVAL
 * with why should json-c still refuse it. */
static int tree_of(const char *text, size_t len, int max_depth, json_object **ret, char *why,
                   size_t why_size)
{
        json_tokener *tok = json_tokener_new_ex(max_depth + 1);
        enum json_tokener_error tok_error;
        json_object *obj;

        if (!tok)
                return -ENOMEM;
        obj = json_tokener_parse_ex(tok, text, (int)len);
        tok_error = json_tokener_get_error(tok);
        json_tokener_free(tok);
        if (!obj || tok_error != json_tokener_success) {
                json_object_put(obj);
                snprintf(why, why_size, "json-c cannot read it: %s", json_tokener_error_desc(tok_error));
                return -EINVAL;
        }
        *ret = obj;
        return 0;
}

int json_strict_parse(const char *text, size_t len, int max_depth, json_object **ret,
                      enum json_strict_error *error, char *why, size_t why_size)
{
        struct check c = { .text = text, .len = len, .max_depth = max_depth };
        json_object *obj = NULL;
        int r = -EINVAL;

        *ret = NULL;
        *error = JSON_STRICT_OK;
        if (why_size)
                why[0] = '\0';
        if (memchr(text, '\0', len)) {
                /* JSON text has no raw control bytes, in strings or out: not JSON at all. */
                *error = JSON_STRICT_SYNTAX;
                snprintf(why, why_size, "a NUL byte in the text");
                return -EINVAL;
        }
        if (len > INT32_MAX) {
                *error = JSON_STRICT_SYNTAX;
                snprintf(why, why_size, "%zu bytes, more than json-c reads", len);
                return -EINVAL;
        }
        if (check_value(&c, 0)) {
                skip_space(&c);
                if (c.pos < c.len)
                        (void)unexpected(&c, "the end of the text");
        }
        if (c.error != JSON_STRICT_OK) {
                *error = c.error;
                snprintf(why, why_size, "%s", c.stop_why);
        } else if (c.nul_at) {
                *error = JSON_STRICT_NUL;
                snprintf(why, why_size, "a string holds a NUL character (\\u0000)");
        } else if (c.number_out_of_range[0]) {
                *error = JSON_STRICT_RANGE;
                snprintf(why, why_size, "the integer %s does not fit in 64 bits", c.number_out_of_range);
        } else if ((r = tree_of(text, len, max_depth, &obj, why, why_size)) < 0) {
                *error = JSON_STRICT_SYNTAX;
        } else if (c.keys != count_keys(obj)) {
                const struct raw_span *key = repeated_top_key(&c);

                *error = JSON_STRICT_DUPLICATE_KEY;
                if (key)
                        snprintf(why, why_size, "the key \"%.*s\" appears twice",
                                 (int)(key->len > 64 ? 64 : key->len), key->start);
                else
                        snprintf(why, why_size, "an object names the same key twice");
                r = -EINVAL;
        } else {
                *ret = TAKE_PTR(obj);
                r = 0;
        }
        json_object_put(obj);
        return r;
}
