/*
 * The search of sparkd-probe-pathmtu, pure so it is unit-tested with a made-up path: the largest
 * UDP payload that crosses a path with don't-fragment set, between a floor (68 bytes) and the
 * interface MTU minus the 28 bytes of IPv4 and UDP headers. The full size is tried first (a
 * healthy path costs one try), then a binary search between the floor and the full size.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* IPv4 (20) and UDP (8) header bytes: the payload of a packet of MTU bytes is MTU - 28. */
#define PATHMTU_HEADER_BYTES 28
/* The smallest payload searched: RFC 791's 68-byte minimum every hop must forward. */
#define PATHMTU_FLOOR_BYTES 68

/* Sends `size` bytes of payload with don't-fragment and says whether it got through: 1 yes,
 * 0 no, negative errno when the search cannot go on (the socket failed). */
typedef int (*pathmtu_try_fn)(uint32_t size, void *userdata);

struct pathmtu_search {
        uint32_t largest;         /* the largest payload that got through; 0 when none did */
        uint32_t smallest_failed; /* the smallest that did not; 0 when the full size passed */
        unsigned tries;           /* sizes tried */
};

/* Searches [floor, full] for the largest size that passes, assuming that what passes at one
 * size passes at every smaller one. Returns 0 (also when nothing passed) or the try's error. */
int pathmtu_search(uint32_t floor, uint32_t full, pathmtu_try_fn try_size, void *userdata,
                   struct pathmtu_search *out);
