/*
 * The daemon's one clock for intervals, deadlines and ages: CLOCK_MONOTONIC in microseconds,
 * which a changed wall clock (NTP, an owner's `date`) does not move.
 */
#pragma once

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_monotonic_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}
