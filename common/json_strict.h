/*
 * Strict reading of JSON from outside (API requests, peer messages): what json-c would accept
 * but change on the way in is refused instead. json-c keeps the last of two equal keys, cuts a
 * string at an escaped NUL (\u0000), clamps integers beyond 64 bits and passes invalid UTF-8
 * through; each would let a message mean something other than what it says, or make an echo
 * (a request id) come back different. The text is checked against RFC 8259 and these rules by
 * this module itself before json-c builds the tree, so what is refused, and the error and
 * sentence it is refused with, are the same with every json-c (whose strict mode refuses more
 * with each release: integers past 64 bits since 0.17, control characters in strings since 0.18).
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

enum json_strict_error {
        JSON_STRICT_OK,
        JSON_STRICT_SYNTAX,        /* not one JSON value, trailing bytes, a raw NUL byte or other
                                    * control character in a string, a leading zero */
        JSON_STRICT_UTF8,          /* a byte sequence that is not UTF-8 (RFC 3629: no overlong form,
                                    * no surrogate) */
        JSON_STRICT_NUL,           /* a string holding NUL, escaped as \u0000 */
        JSON_STRICT_DUPLICATE_KEY, /* an object names one key twice */
        JSON_STRICT_RANGE,         /* an integer outside what 64 bits hold */
        JSON_STRICT_DEPTH,         /* nested deeper than the limit */
};

/* Parses text[0..len) as one JSON value (whitespace may follow), each value inside at most
 * max_depth - 1 arrays and objects (as json-c counts depth). Errors come in this order: syntax,
 * UTF-8 and depth (the first in the text), then NUL, then range, then duplicate keys.
 * Returns 0 and the value in *ret, or -EINVAL with *error saying which rule failed and, where
 * one can be named, a sentence in why (why_size bytes). */
int json_strict_parse(const char *text, size_t len, int max_depth, json_object **ret,
                      enum json_strict_error *error, char *why, size_t why_size);
