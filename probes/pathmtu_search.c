#include "pathmtu_search.h"

#include <errno.h>

int pathmtu_search(uint32_t floor, uint32_t full, pathmtu_try_fn try_size, void *userdata,
                   struct pathmtu_search *out)
{
        uint32_t lo, hi;
        int r;

        *out = (struct pathmtu_search){ 0 };
        if (floor == 0 || floor > full)
                return -EINVAL;
        out->tries++;
        r = try_size(full, userdata);
        if (r < 0)
                return r;
        if (r > 0) {
                out->largest = full;
                return 0;
        }
        out->smallest_failed = full;
        /* Invariant: everything below lo is known to pass (or is below the floor), hi fails. */
        lo = floor;
        hi = full;
        while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;

                out->tries++;
                r = try_size(mid, userdata);
                if (r < 0)
                        return r;
                if (r > 0) {
                        out->largest = mid;
                        lo = mid + 1;
                } else {
                        out->smallest_failed = mid;
                        hi = mid;
                }
        }
        return 0;
}
