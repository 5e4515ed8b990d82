/* String parsing and formatting helpers that config, daemon and client share. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parses a whole decimal (or 0x/0 prefixed, when base is 0) number within [min, max]. */
int parse_uint64(const char *s, int base, uint64_t min, uint64_t max, uint64_t *out);
/* Bytes, with an optional K, M or G (or KiB, MiB, GiB) suffix, powers of 1024, in [min, max]. */
int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* A finite decimal number within [min, max]. */
int parse_double(const char *s, double min, double max, double *out);
/* yes/no, true/false, on/off, 1/0. */
int parse_bool(const char *s, bool *out);
/* Durations like "30", "30s", "500ms", "5m", "1h" into microseconds. */
int parse_duration_usec(const char *s, uint64_t *out);

/* "1d 2h 3m 4s" style, at most the two largest units; writes into buf and returns it. */
const char *format_duration_sec(uint64_t sec, char *buf, size_t size);

bool str_is_empty(const char *s);
char *str_strip(char *s);
/* Shortens s in place to at most max bytes (max >= 8): whole words where there is a space in
 * its second half, never a UTF-8 character cut, no dangling "(", ",", ";", ":" or space at the
 * end, and "..." where text was left out. A string that fits is left as it is. Returns s. */
char *str_shorten(char *s, size_t max);

/* NULL-terminated string arrays. */
void strv_free(char **strv);
size_t strv_length(char *const *strv);
int strv_push(char ***strv, const char *s);
bool strv_contains(char *const *strv, const char *s);
/* Replaces *to with a copy of from (an empty array when from is NULL); -ENOMEM leaves *to. */
int strv_copy(char *const *from, char ***to);
static inline void strv_freep(char ***p)
{
        strv_free(*p);
}
#define _cleanup_strv_ __attribute__((cleanup(strv_freep)))

/* Splits on spaces and commas, dropping empty words. */
int strv_split(const char *s, char ***out);
