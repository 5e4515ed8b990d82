/* The gate: a launcher's file compared with what the plan makes of it (sparkc env --check --for
 * sparkrun|svd FILE), each difference named with its fix. Pure. */
#pragma once

#include <stdio.h>

#include "common/launcher_export.h"

/* Writes each difference between text (the file at path) and what the plan makes, with its fix;
 * returns how many, or -EINVAL with the reason written when the plan has no file to compare. */
int launcher_check(FILE *report, enum launcher_format format, const char *text, const char *path,
                   const struct launcher_plan *p);
