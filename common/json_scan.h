/*
 * Walking JSON text by the extent of its values, so that a large document (a saved probe history
 * of a thousand results) is read one piece at a time: each piece parsed on its own is a small
 * tree made and freed, where the whole document as one tree would take ten times its size in
 * memory at once, and leave the heap that large. Only the structure between the pieces is
 * checked here (strings closed, brackets matched, no control characters); a piece is valid JSON
 * when json_scan_parse takes it.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* A value's place in the text: text + start, len bytes. */
struct json_scan_span {
        size_t start;
        size_t len;
};

/* An object or an array being walked, item by item. */
struct json_scan_list {
        const char *text;
        size_t len;
        size_t pos;    /* past the last item read, or past the closing bracket once at the end */
        char close;    /* '}' or ']' */
        bool has_item; /* an item was read: a ',' comes before the next */
};

/* Starts walking the object ('{') or array ('[') whose text begins, after any whitespace, at
 * text + pos; -EBADMSG when something else is there. */
int json_scan_open(struct json_scan_list *list, const char *text, size_t len, size_t pos, char bracket);
/* The next member of an object: 1 with its key (the text between the quotes, escapes as
 * written) and its value, 0 past the closing '}', -EBADMSG. */
int json_scan_member(struct json_scan_list *list, struct json_scan_span *key, struct json_scan_span *value);
/* The next element of an array: 1 with its span, 0 past the closing ']', -EBADMSG. */
int json_scan_element(struct json_scan_list *list, struct json_scan_span *value);
/* Whether only whitespace follows pos. */
bool json_scan_at_end(const char *text, size_t len, size_t pos);
/* The value text[span] is, parsed alone as one JSON value; NULL when it is not exactly one. */
json_object *json_scan_parse(const char *text, struct json_scan_span span);
/* Whether text[key] is a key spelled as name, without escapes. */
bool json_scan_key_is(const char *text, struct json_scan_span key, const char *name);
