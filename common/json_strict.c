#include "json_strict.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

#define TOP_KEYS_MAX 64

struct raw_span {
        const char *start;
        size_t len;
};

struct raw_scan {
        size_t keys; /* colons outside strings: one per member of every object */
        bool has_escaped_nul;
        /* json-c, even strict, takes 'single quotes', NaN and Infinity: not JSON to anyone else */
        bool is_not_standard;
        char number_out_of_range[48];
        /* the outermost object's keys as written, to name a repeated one */
        struct raw_span top_keys[TOP_KEYS_MAX];
        size_t n_top_keys;
};

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

static bool is_literal(const char *word, size_t len)
{
        static const char *const literals[] = { "true", "false", "null" };

        for (size_t i = 0; i < ARRAY_SIZE(literals); i++)
                if (strlen(literals[i]) == len && memcmp(word, literals[i], len) == 0)
                        return true;
        return false;
}

/* One pass over the text as written, outside json-c: what json-c's tree no longer shows. The
 * text is known to be valid JSON when this runs, so strings and numbers are well formed. */
static void scan_raw(const char *text, size_t len, struct raw_scan *scan)
{
        struct raw_span last_string = { 0 };
        int depth = 0;

        *scan = (struct raw_scan){ 0 };
        for (size_t i = 0; i < len; i++) {
                char c = text[i];

                if (c == '"') {
                        size_t start = i + 1;

                        for (i++; i < len && text[i] != '"'; i++) {
                                if (text[i] != '\\')
                                        continue;
                                if (i + 5 < len && text[i + 1] == 'u' &&
                                    memcmp(text + i + 2, "0000", 4) == 0)
                                        scan->has_escaped_nul = true;
                                i++;
                        }
                        last_string = (struct raw_span){ text + start, i - start };
                } else if (c == '{' || c == '[') {
                        depth++;
                } else if (c == '}' || c == ']') {
                        depth--;
                } else if (c == ':') {
                        scan->keys++;
                        if (depth == 1 && scan->n_top_keys < TOP_KEYS_MAX)
                                scan->top_keys[scan->n_top_keys++] = last_string;
                } else if (c == '-' || (c >= '0' && c <= '9')) {
                        size_t start = i;
                        bool is_integer = true;

                        while (i + 1 < len && strchr("0123456789+-.eE", text[i + 1])) {
                                if (strchr(".eE", text[i + 1]))
                                        is_integer = false;
                                i++;
                        }
                        if (is_integer && !scan->number_out_of_range[0] &&
                            !integer_fits(text + start, i + 1 - start))
                                snprintf(scan->number_out_of_range, sizeof(scan->number_out_of_range),
                                         "%.*s", (int)(i + 1 - start > 40 ? 40 : i + 1 - start),
                                         text + start);
                } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
                        size_t start = i;

                        while (i + 1 < len && ((text[i + 1] >= 'a' && text[i + 1] <= 'z') ||
                                               (text[i + 1] >= 'A' && text[i + 1] <= 'Z')))
                                i++;
                        if (!is_literal(text + start, i + 1 - start))
                                scan->is_not_standard = true;
                } else if (!strchr(" \t\r\n,", c)) {
                        scan->is_not_standard = true;
                }
        }
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
static const struct raw_span *repeated_top_key(const struct raw_scan *scan)
{
        for (size_t i = 0; i < scan->n_top_keys; i++)
                for (size_t j = 0; j < i; j++)
                        if (scan->top_keys[i].start && scan->top_keys[j].start &&
                            scan->top_keys[i].len == scan->top_keys[j].len &&
                            memcmp(scan->top_keys[i].start, scan->top_keys[j].start,
                                   scan->top_keys[i].len) == 0)
                                return &scan->top_keys[i];
        return NULL;
}

int json_strict_parse(const char *text, size_t len, int max_depth, json_object **ret,
                      enum json_strict_error *error, char *why, size_t why_size)
{
        json_tokener *tok;
        json_object *obj;
        enum json_tokener_error tok_error;
        struct raw_scan scan;

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
        tok = json_tokener_new_ex(max_depth);
        if (!tok)
                return -ENOMEM;
        /* Strict: standard JSON only. json-c otherwise takes 'single-quoted' strings, comments
         * and bare words, which the scan below, and any other reader, would read differently. */
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
                                            JSON_TOKENER_VALIDATE_UTF8);
        obj = json_tokener_parse_ex(tok, text, (int)len);
        tok_error = json_tokener_get_error(tok);
        if (obj && tok_error == json_tokener_success) {
                for (size_t i = (size_t)json_tokener_get_parse_end(tok); i < len; i++) {
                        if (!strchr(" \t\r\n", text[i])) {
                                tok_error = json_tokener_error_parse_unexpected;
                                break;
                        }
                }
        } else if (tok_error == json_tokener_continue) {
                tok_error = json_tokener_error_parse_eof;
        }
        json_tokener_free(tok);
        if (!obj || tok_error != json_tokener_success) {
                json_object_put(obj);
                *error = tok_error == json_tokener_error_depth               ? JSON_STRICT_DEPTH
                         : tok_error == json_tokener_error_parse_utf8_string ? JSON_STRICT_UTF8
                                                                             : JSON_STRICT_SYNTAX;
                snprintf(why, why_size, "%s", json_tokener_error_desc(tok_error));
                return -EINVAL;
        }

        scan_raw(text, len, &scan);
        if (scan.is_not_standard) {
                *error = JSON_STRICT_SYNTAX;
                snprintf(why, why_size, "not standard JSON (single quotes, NaN or Infinity)");
        } else if (scan.has_escaped_nul) {
                *error = JSON_STRICT_NUL;
                snprintf(why, why_size, "a string holds a NUL character (\\u0000)");
        } else if (scan.number_out_of_range[0]) {
                *error = JSON_STRICT_RANGE;
                snprintf(why, why_size, "the integer %s does not fit in 64 bits", scan.number_out_of_range);
        } else if (scan.keys != count_keys(obj)) {
                const struct raw_span *key = repeated_top_key(&scan);

                *error = JSON_STRICT_DUPLICATE_KEY;
                if (key)
                        snprintf(why, why_size, "the key \"%.*s\" appears twice",
                                 (int)(key->len > 64 ? 64 : key->len), key->start);
                else
                        snprintf(why, why_size, "an object names the same key twice");
        }
        if (*error != JSON_STRICT_OK) {
                json_object_put(obj);
                return -EINVAL;
        }
        *ret = obj;
        return 0;
}
