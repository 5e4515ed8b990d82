/*
 * 64-bit FNV-1a over bytes: byte by byte, so every node computes the same value whatever its
 * endianness. For spreading (with a finaliser) and for telling whether inputs changed; not for
 * anything an attacker chooses to collide.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define FNV1A64_INIT 0xcbf29ce484222325ULL

static inline uint64_t fnv1a64(uint64_t h, const void *data, size_t len)
{
        const unsigned char *b = data;

        for (size_t i = 0; i < len; i++) {
                h ^= b[i];
                h *= 0x100000001b3ULL;
        }
        return h;
}
