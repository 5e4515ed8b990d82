/* Small helpers shared by every sparkd source file: cleanup attributes and array sizes. */
#pragma once

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define _cleanup_(f)     __attribute__((cleanup(f)))
#define _cleanup_free_   _cleanup_(freep)
#define _cleanup_close_  _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _printf_(a, b)   __attribute__((format(printf, a, b)))
#define _unused_         __attribute__((unused))

static inline void freep(void *p)
{
        free(*(void **)p);
}

static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}

static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}

/* Hands ownership out of a _cleanup_ variable. */
#define TAKE_PTR(p)                                                                                         \
        ({                                                                                                  \
                __typeof__(p) _taken = (p);                                                                 \
                (p) = NULL;                                                                                 \
                _taken;                                                                                     \
        })
#define TAKE_FD(fd)                                                                                         \
        ({                                                                                                  \
                int _taken = (fd);                                                                          \
                (fd) = -EBADF;                                                                              \
                _taken;                                                                                     \
        })
