/* fuzz_tmpdir (fuzz.h): where the targets that need files write them. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

void fuzz_tmpdir(const char *target, char *buf, size_t size)
{
        const char *bases[] = { getenv("SPARKD_FUZZ_TMPDIR"), "/dev/shm", "/tmp" };

        for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
                if (!bases[i] || !bases[i][0])
                        continue;
                if ((size_t)snprintf(buf, size, "%s/sparkd-fuzz-%s.XXXXXX", bases[i], target) >= size)
                        abort();
                if (mkdtemp(buf))
                        return;
        }
        abort();
}
