/* The heap in use now, for tests that check what a call keeps: glibc's count, or libasan's when
 * it replaces malloc. */
#pragma once

#include <malloc.h>
#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
/* libasan's, whose header not every compiler installs */
size_t __sanitizer_get_current_allocated_bytes(void);

static inline size_t heap_in_use(void)
{
        return __sanitizer_get_current_allocated_bytes();
}
#else
static inline size_t heap_in_use(void)
{
        return mallinfo2().uordblks;
}
#endif
