/* Reading members of JSON the program itself made (results, maps) with a fallback for a member
 * that is absent or of another type, so callers need no check per field. */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

/* o[key] when it is a string, else fallback. */
const char *json_get_string(json_object *o, const char *key, const char *fallback);
/* o[key] as an int when it is a number, else fallback. */
int json_get_int(json_object *o, const char *key, int fallback);
/* The length of o's text as written with JSON_C_TO_STRING_PLAIN, without keeping that text:
 * json-c keeps what it writes on the object written for as long as the object lives, which for a
 * held message doubles what it costs. */
size_t json_plain_text_length(json_object *o);
/* Gives fn o's text as written with JSON_C_TO_STRING_PLAIN (len bytes, not terminated), without
 * keeping that text on o, as above; -ENOMEM without memory. */
int json_plain_text_with(json_object *o, void (*fn)(const char *text, size_t len, void *userdata),
                         void *userdata);
/* o's text as json-c writes it with JSON_C_TO_STRING_PRETTY and flags, but for an empty array
 * or object, written "[]" and "{}" as json-c 0.17 and later write them (0.16 and before break
 * the line between the brackets): the same text with every json-c. Freed by the caller; NULL
 * without memory. */
char *json_pretty_text(json_object *o, int flags);
