/*
 * What every fuzz target offers: libFuzzer's entry point. Built with -Dfuzz=true (clang) it is
 * driven by libFuzzer; otherwise replay.c gives it a main that feeds it files, so the corpus and
 * the regression inputs replay in the normal (gcc, ASan) build too.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Makes a directory of the target's own: under $SPARKD_FUZZ_TMPDIR when set (run.sh removes it,
 * as libFuzzer may end without atexit), else in /dev/shm where there is a tmpfs (a disk's block
 * discards on every rewrite would cost more than the parse), else in /tmp. Aborts on failure. */
void fuzz_tmpdir(const char *target, char *buf, size_t size);
