/* Version strings of the "580.95.05", "2.28.9" kind, as drivers and libraries name themselves. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Whether the n bytes at s are at least two dot-separated groups of digits, nothing else. */
bool dotted_version_is(const char *s, size_t n);
/* The n bytes at s as a string into dst; -ENOBUFS when they do not fit. */
int dotted_version_copy(char *dst, size_t size, const char *s, size_t n);
