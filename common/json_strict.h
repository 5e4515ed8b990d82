/*
 * Strict reading of JSON from outside (API requests, peer messages): what json-c would accept
 * but change on the way in is refused instead. json-c keeps the last of two equal keys, cuts a
 * string at an escaped NUL (\u0000), clamps integers beyond 64 bits and passes invalid UTF-8
 * through; each would let a message mean something other than what it says, or make an echo
 * (a request id) come back different.
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

enum json_strict_error {
        JSON_STRICT_OK,
        JSON_STRICT_SYNTAX,        /* not one JSON value, trailing bytes, a raw NUL byte */
        JSON_STRICT_UTF8,          /* a byte sequence that is not UTF-8 */
        JSON_STRICT_NUL,           /* a string holding NUL, escaped as \u0000 */
        JSON_STRICT_DUPLICATE_KEY, /* an object names one key twice */
        JSON_STRICT_RANGE,         /* an integer outside what 64 bits hold */
        JSON_STRICT_DEPTH,         /* nested deeper than the limit */
};

/* Parses text[0..len) as one JSON value (whitespace may follow), nested at most max_depth.
 * Returns 0 and the value in *ret, or -EINVAL with *error saying which rule failed and, where
 * one can be named, a sentence in why (why_size bytes). */
int json_strict_parse(const char *text, size_t len, int max_depth, json_object **ret,
                      enum json_strict_error *error, char *why, size_t why_size);
