#include "json_scan.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* Deeper than json-c parses (32): nothing it would take is refused here. */
#define SCAN_MAX_DEPTH 64

static size_t skip_space(const char *text, size_t len, size_t pos)
{
        while (pos < len &&
               (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r'))
                pos++;
        return pos;
}

/* From the opening quote at pos to just past the closing one; 0 when the string is not closed or
 * holds a control character (JSON allows none, and a NUL would end the text early for json-c). */
static size_t skip_string(const char *text, size_t len, size_t pos)
{
        for (pos++; pos < len; pos++) {
                unsigned char c = (unsigned char)text[pos];

                if (c == '"')
                        return pos + 1;
                if (c < 0x20)
                        return 0;
                if (c == '\\')
                        pos++;
        }
        return 0;
}

static bool is_scalar_char(char c)
{
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' ||
               c == '+' || c == '.';
}

/* From a value's first character at pos to just past its end; 0 when it is no balanced value. */
static size_t skip_value(const char *text, size_t len, size_t pos)
{
        uint64_t is_object = 0; /* one bit per open bracket: 1 for '{' */
        unsigned depth = 0;

        if (pos >= len)
                return 0;
        if (text[pos] == '"')
                return skip_string(text, len, pos);
        if (text[pos] != '{' && text[pos] != '[') {
                size_t end = pos;

                while (end < len && is_scalar_char(text[end]))
                        end++;
                return end > pos ? end : 0;
        }
        while (pos < len) {
                char c = text[pos];

                if (c == '"') {
                        pos = skip_string(text, len, pos);
                        if (pos == 0)
                                return 0;
                        continue;
                }
                if ((unsigned char)c < 0x20 && c != '\t' && c != '\n' && c != '\r')
                        return 0;
                if (c == '{' || c == '[') {
                        if (depth == SCAN_MAX_DEPTH)
                                return 0;
                        is_object = (is_object << 1) | (c == '{');
                        depth++;
                } else if (c == '}' || c == ']') {
                        if ((c == '}') != (is_object & 1))
                                return 0;
                        is_object >>= 1;
                        if (--depth == 0)
                                return pos + 1;
                }
                pos++;
        }
        return 0;
}

int json_scan_open(struct json_scan_list *list, const char *text, size_t len, size_t pos, char bracket)
{
        pos = skip_space(text, len, pos);
        if (pos >= len || text[pos] != bracket)
                return -EBADMSG;
        *list = (struct json_scan_list){
                .text = text, .len = len, .pos = pos + 1, .close = bracket == '{' ? '}' : ']'
        };
        return 0;
}

/* Up to the next item's first character: 1, or 0 past the closing bracket. */
static int next_item(struct json_scan_list *list)
{
        size_t p = skip_space(list->text, list->len, list->pos);

        if (p < list->len && list->text[p] == list->close) {
                list->pos = p + 1;
                return 0;
        }
        if (list->has_item) {
                if (p >= list->len || list->text[p] != ',')
                        return -EBADMSG;
                p = skip_space(list->text, list->len, p + 1);
        }
        if (p >= list->len)
                return -EBADMSG;
        list->pos = p;
        return 1;
}

static int read_value(struct json_scan_list *list, struct json_scan_span *value)
{
        size_t end = skip_value(list->text, list->len, list->pos);

        if (end == 0)
                return -EBADMSG;
        *value = (struct json_scan_span){ .start = list->pos, .len = end - list->pos };
        list->pos = end;
        list->has_item = true;
        return 1;
}

int json_scan_member(struct json_scan_list *list, struct json_scan_span *key, struct json_scan_span *value)
{
        size_t end;
        int r = next_item(list);

        if (r <= 0)
                return r;
        if (list->text[list->pos] != '"' || (end = skip_string(list->text, list->len, list->pos)) == 0)
                return -EBADMSG;
        *key = (struct json_scan_span){ .start = list->pos + 1, .len = end - list->pos - 2 };
        end = skip_space(list->text, list->len, end);
        if (end >= list->len || list->text[end] != ':')
                return -EBADMSG;
        list->pos = skip_space(list->text, list->len, end + 1);
        return read_value(list, value);
}

int json_scan_element(struct json_scan_list *list, struct json_scan_span *value)
{
        int r = next_item(list);

        return r <= 0 ? r : read_value(list, value);
}

bool json_scan_at_end(const char *text, size_t len, size_t pos)
{
        return skip_space(text, len, pos) == len;
}

json_object *json_scan_parse(const char *text, struct json_scan_span span)
{
        struct json_tokener *tok = json_tokener_new();
        json_object *o;
        bool is_whole;

        if (!tok || span.len > INT32_MAX) {
                json_tokener_free(tok);
                return NULL;
        }
        o = json_tokener_parse_ex(tok, text + span.start, (int)span.len);
        if (!o && json_tokener_get_error(tok) == json_tokener_continue) {
                /* A number at the very end is complete only once the tokener sees the text end. */
                o = json_tokener_parse_ex(tok, "", 1);
                is_whole = o && json_tokener_get_error(tok) == json_tokener_success;
        } else {
                is_whole = o && json_tokener_get_error(tok) == json_tokener_success &&
                           json_tokener_get_parse_end(tok) == span.len;
        }
        if (!is_whole) {
                json_object_put(o);
                o = NULL;
        }
        json_tokener_free(tok);
        return o;
}

bool json_scan_key_is(const char *text, struct json_scan_span key, const char *name)
{
        return key.len == strlen(name) && memcmp(text + key.start, name, key.len) == 0;
}
