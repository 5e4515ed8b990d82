/*
 * What every fuzz target offers: libFuzzer's entry point. Built with -Dfuzz=true (clang) it is
 * driven by libFuzzer; otherwise replay.c gives it a main that feeds it files, so the corpus and
 * the regression inputs replay in the normal (gcc, ASan) build too.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
