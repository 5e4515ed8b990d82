#include "flap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int flap_init(struct flap_detector *f, unsigned threshold, uint64_t window_usec)
{
        *f = (struct flap_detector){ 0 };
        return flap_reconfigure(f, threshold, window_usec);
}

void flap_done(struct flap_detector *f)
{
        free(f->times);
        *f = (struct flap_detector){ 0 };
}

int flap_reconfigure(struct flap_detector *f, unsigned threshold, uint64_t window_usec)
{
        uint64_t *times;

        if (threshold < 2 || threshold > FLAP_MAX_THRESHOLD || window_usec == 0)
                return -EINVAL;
        times = calloc(threshold, sizeof(*times));
        if (!times)
                return -ENOMEM;
        /* Keep the newest changes, oldest first, as far as they fit. */
        {
                unsigned keep = f->count < threshold ? f->count : threshold;

                for (unsigned i = 0; i < keep; i++) {
                        unsigned from = (f->head + f->threshold - keep + i) % f->threshold;

                        times[i] = f->times[from];
                }
                f->count = keep;
                f->head = keep % threshold;
        }
        free(f->times);
        f->times = times;
        f->threshold = threshold;
        f->window_usec = window_usec;
        return 0;
}

enum flap_verdict flap_record(struct flap_detector *f, uint64_t now)
{
        unsigned oldest;

        f->last_change_usec = now;
        if (f->is_flapping) {
                f->changes_while_flapping++;
                return FLAP_SUPPRESSED;
        }
        f->times[f->head] = now;
        f->head = (f->head + 1) % f->threshold;
        if (f->count < f->threshold)
                f->count++;
        if (f->count < f->threshold)
                return FLAP_QUIET;
        /* The ring is full: head now points at the oldest of the last `threshold` changes. */
        oldest = f->head;
        if (now - f->times[oldest] > f->window_usec)
                return FLAP_QUIET;
        f->is_flapping = true;
        f->changes_while_flapping = f->threshold;
        return FLAP_STARTED;
}

bool flap_check_stable(struct flap_detector *f, uint64_t now)
{
        if (!f->is_flapping || now - f->last_change_usec < f->window_usec)
                return false;
        f->is_flapping = false;
        f->count = 0;
        f->head = 0;
        return true;
}

uint64_t flap_stable_at(const struct flap_detector *f)
{
        return f->is_flapping ? f->last_change_usec + f->window_usec : 0;
}
