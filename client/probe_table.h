/*
 * How sparkc shows probe results (sparkc probe, sparkc history): one row per result under one
 * header, each kind's measurement and expectation in its own terms, then beneath the row what
 * the kind has in detail (each direction and rail with its retransmits, the round trip's spread,
 * the path MTU's numbers, NCCL's sizes) and the error with the node it happened on.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdio.h>

void probe_table_header(FILE *out);

/*
 * One result: its row, then its detail lines. kinds is the daemon's probe-kinds list (for the
 * metric and unit of kinds this client has no layout of its own for); with is_full, also the
 * lengthy parts (NCCL's per-size table, phases) that history leaves out.
 */
void probe_table_result(FILE *out, json_object *result, json_object *kinds, bool is_full);

/* The kind of that name in the daemon's probe-kinds list, or NULL. */
json_object *probe_kind_find(json_object *kinds, const char *name);
