/*
 * A JSON value that writes text it was given, verbatim: JSON written once (a held summary's
 * results, a cached view) is put into a reply or a message without being parsed into json-c
 * objects to be written again, which at a 32-node cluster's size costs milliseconds and
 * megabytes. The value is an empty string to whoever reads it rather than writes it.
 *
 * A text held long and read seldom (the sections of every node a cluster view holds: N nodes'
 * results, each with a row per peer, N² rows in all) may be packed with LZ4; a read unpacks a
 * copy, which stays until json_raw_release_unpacked. The daemon releases them after each turn of
 * its loop (json_raw_on_unpack), so a text read is a text valid until the callback returns: no
 * caller may keep a packed value's text past that (api_write copies such a text, never refers to it).
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Texts shorter than this are not packed: the block and its bookkeeping would save too little. */
#define JSON_RAW_PACK_MIN 1024

/* A value writing a copy of text, which must be valid JSON; NULL without memory. */
json_object *json_raw_new(const char *text);
/* The same with text itself (malloc'd), freed with the value, or at once when NULL is returned. */
json_object *json_raw_take(char *text);
/* The text a value of json_raw_new writes; NULL for any other value. */
const char *json_raw_text(json_object *value);
/* The same, with its length in *len (len may be NULL). NULL too when a packed text cannot be
 * unpacked (no memory). */
const char *json_raw_text_length(json_object *value, size_t *len);
/* Whether value is one of json_raw_new (packed or not), without unpacking it. */
bool json_raw_is(json_object *value);
/* The length of its text, without unpacking it; -EINVAL when value is not one of json_raw_new. */
int json_raw_length(json_object *value, size_t *len);
bool json_raw_is_packed(json_object *value);
/* Packs value's text where it is JSON_RAW_PACK_MIN bytes or more and LZ4 makes it a quarter
 * smaller; else leaves it as it is. 0; -EINVAL when value is not one of json_raw_new; -ENOMEM,
 * the text left as it was. */
int json_raw_pack(json_object *value);
/* Frees every copy unpacked since the last call: the pointers json_raw_text gave for them end.
 * Returns the bytes freed. */
size_t json_raw_release_unpacked(void);
/* fn is called when a text is unpacked while no copy is kept: the daemon schedules the release. */
void json_raw_on_unpack(void (*fn)(void));
/* What value means, as a new reference: for a value of json_raw_new its text read back into
 * json-c objects, for any other value the value itself. NULL for NULL, or without memory. */
json_object *json_raw_parsed(json_object *value);
