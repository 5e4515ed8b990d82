/*
 * Flap detection for one link: N state changes within a window make the link "flapping" (one
 * alert instead of N lines); it is "stable" again once no change came for a whole window. Pure
 * logic over a caller-supplied clock, so it is tested without timers.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#define FLAP_MAX_THRESHOLD 1000

struct flap_detector {
        unsigned threshold;
        uint64_t window_usec;
        uint64_t *times; /* ring of the last `threshold` change times */
        unsigned count;  /* valid entries in times */
        unsigned head;
        bool is_flapping;
        uint64_t last_change_usec;
        unsigned changes_while_flapping;
};

enum flap_verdict {
        FLAP_QUIET,      /* report the change as usual */
        FLAP_STARTED,    /* this change made the link flapping: raise the alert */
        FLAP_SUPPRESSED, /* flapping already: count it, say nothing */
};

int flap_init(struct flap_detector *f, unsigned threshold, uint64_t window_usec);
void flap_done(struct flap_detector *f);
/* Changes the limits, keeping what was seen within the new window. */
int flap_reconfigure(struct flap_detector *f, unsigned threshold, uint64_t window_usec);

enum flap_verdict flap_record(struct flap_detector *f, uint64_t now_usec);
/* When a flapping link has been calm for the window: clears the state and returns true. */
bool flap_check_stable(struct flap_detector *f, uint64_t now_usec);
/* When flap_check_stable should be asked next (0: not flapping). */
uint64_t flap_stable_at(const struct flap_detector *f);
