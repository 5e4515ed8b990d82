/*
 * The probe kinds, one table: for each, the helper that measures it, the parameters it takes
 * (range, default, the helper option each becomes and on which side), the number a result is
 * judged by, and how long it may take (struct probe_kind). The rest of the probe code is the
 * same for every kind, so adding a kind is adding a row and its helper executable.
 */
#pragma once

#include <stddef.h>

#include "probe_kind.h"
/* What the table's users do with a kind: check and pass its parameters. */
#include "probe_params.h"

/* Room for this many kinds in per-kind arrays. */
#define PROBE_KINDS_MAX 8

const struct probe_kind *probe_kind_find(const char *name);
/* The kinds in table order, for lists and help texts; NULL past the last. */
const struct probe_kind *probe_kind_at(size_t i);
/* The kind's position in the table, below PROBE_KINDS_MAX. */
size_t probe_kind_index(const struct probe_kind *kind);
/* "rtt, tcp, ..." */
void probe_kind_names(char *buf, size_t size);
