/*
 * A JSON value that writes text it was given, verbatim: JSON written once (a held summary's
 * results, a cached view) is put into a reply or a message without being parsed into json-c
 * objects to be written again, which at a 32-node cluster's size costs milliseconds and
 * megabytes. The value is an empty string to whoever reads it rather than writes it.
 */
#pragma once

#include <json-c/json.h>

/* A value writing a copy of text, which must be valid JSON; NULL without memory. */
json_object *json_raw_new(const char *text);
/* The same with text itself (malloc'd), freed with the value, or at once when NULL is returned. */
json_object *json_raw_take(char *text);
/* The text a value of json_raw_new writes; NULL for any other value. */
const char *json_raw_text(json_object *value);
/* The same, with its length in *len (len may be NULL). */
const char *json_raw_text_length(json_object *value, size_t *len);
/* What value means, as a new reference: for a value of json_raw_new its text read back into
 * json-c objects, for any other value the value itself. NULL for NULL, or without memory. */
json_object *json_raw_parsed(json_object *value);
