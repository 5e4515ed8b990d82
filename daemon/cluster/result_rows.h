/*
 * The rows the links view reads from a node's "results" section: per result the peer, the kind,
 * the time, the verdict and the kind's value each way, made from the section's text when the view
 * is built and freed after it. A held summary keeps only the text (some 7 KiB a node); rows for
 * every node of a 32-node cluster kept beside it took as much again. Unknown members of a result
 * are left out of its row.
 */
#pragma once

#include <stddef.h>
#include <stdio.h>

/* What each probe kind's result is measured in: the result's member for the way from the node
 * that measured (out) and back (in; NULL when one number covers the round trip). */
struct result_kind {
        const char *kind, *metric, *out, *in;
};
/* NULL for a kind the links view does not show. */
const struct result_kind *result_kind_of(const char *kind);

/* Strings that live as long as the rows (struct result_rows) they are in. */
struct result_row {
        const char *peer_id;
        const char *peer; /* "" when the result names none, as for at and verdict */
        const char *kind;
        const char *at;
        const char *verdict;
        const char *out; /* the JSON text of the kind's out member, "" when absent or null */
        const char *in;  /* and of its in member */
};

struct result_rows {
        struct result_row *v;
        size_t n;
};

/* One row per element of the results array text[0..len) whose kind the links view shows, whose
 * members are strings where a string is expected and fit their fields (a node id is 32 hex
 * digits); others are left out. text may be NULL or not an array: no rows. Read in place, a
 * result at a time: no tree of the whole section. -ENOMEM. */
int result_rows_read(const char *text, size_t len, struct result_rows *out);
void result_rows_free(struct result_rows *rows);
/* A row's out or in value written to f as JSON again: a number as its text was ("12.30" stays
 * "12.30", an integer as json-c writes it), "" as null. */
void result_row_value_write(FILE *f, const char *text);
