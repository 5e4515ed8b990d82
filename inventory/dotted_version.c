#include "dotted_version.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

bool dotted_version_is(const char *s, size_t n)
{
        bool has_digit = false;
        size_t dots = 0;

        for (size_t i = 0; i < n; i++) {
                if (isdigit((unsigned char)s[i]))
                        has_digit = true;
                else if (s[i] == '.' && has_digit) {
                        dots++;
                        has_digit = false;
                } else
                        return false;
        }
        return has_digit && dots > 0;
}

int dotted_version_copy(char *dst, size_t size, const char *s, size_t n)
{
        if (n >= size)
                return -ENOBUFS;
        memcpy(dst, s, n);
        dst[n] = '\0';
        return 0;
}
