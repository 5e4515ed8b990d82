/* A minimal harness for unit tests: CHECK records a failure with its place and goes on, so one
 * run shows every broken expectation; test_main's exit code is what meson reads. */
#pragma once

#include <stdio.h>
#include <string.h>

static int test_failures;
static int test_checks;
static int test_skips;

#define CHECK(cond)                                                                                         \
        do {                                                                                                \
                test_checks++;                                                                              \
                if (!(cond)) {                                                                              \
                        test_failures++;                                                                    \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);            \
                }                                                                                           \
        } while (0)

#define CHECK_STREQ(a, b)                                                                                   \
        do {                                                                                                \
                const char *_a = (a), *_b = (b);                                                            \
                test_checks++;                                                                              \
                if (!_a || !_b || strcmp(_a, _b) != 0) {                                                    \
                        test_failures++;                                                                    \
                        fprintf(stderr, "%s:%d: expected \"%s\", got \"%s\"\n", __FILE__, __LINE__,         \
                                _b ? _b : "(null)", _a ? _a : "(null)");                                    \
                }                                                                                           \
        } while (0)

#define RUN(test)                                                                                           \
        do {                                                                                                \
                int _before = test_failures;                                                                \
                test();                                                                                     \
                printf("%s %s\n", test_failures == _before ? "ok  " : "FAIL", #test);                       \
        } while (0)

/* SKIP_RUN: a test this machine cannot run, with the reason; the others still run, and the
 * program then exits 77 (meson's skip) unless one of them failed. */
#define SKIP_RUN(test, reason)                                                                              \
        do {                                                                                                \
                test_skips++;                                                                               \
                printf("SKIP %s: %s\n", #test, reason);                                                     \
        } while (0)

static inline int test_result(void)
{
        printf("%d checks, %d failed, %d skipped\n", test_checks, test_failures, test_skips);
        return test_failures ? 1 : test_skips ? 77 : 0;
}
