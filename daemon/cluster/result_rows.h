/*
 * A held node's "results" section kept compact. A 32-node cluster's summaries hold some 3,000
 * results; as json-c trees they take about eleven times their text (some 4 MiB a node). What is
 * kept instead is the section's text, written back verbatim wherever the summary is written
 * (relayed to a peer, shown by the API), and one row per result with what the links view reads,
 * the rows and their strings in one block. Unknown members of a result stay in the text and are
 * left out of its row.
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

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

/* One row per entry of a results array whose kind the links view shows, whose members are
 * strings where a string is expected and fit their fields (a node id is 32 hex digits); others
 * are left out. results may be NULL or not an array: no rows. -ENOMEM. */
int result_rows_read(json_object *results, struct result_rows *out);
void result_rows_free(struct result_rows *rows);
/* A row's out or in value as JSON again, written as its text was ("12.30" stays "12.30"). */
json_object *result_row_value(const char *text);

/* Reads sections' "results" into rows, then puts in its place an object that writes the same
 * text and holds nothing else. No "results": no rows, sections unchanged. -ENOMEM. */
int result_rows_hold(json_object *sections, struct result_rows *out);
/* The text a held section writes; NULL when the value is not one result_rows_hold put. */
const char *result_rows_held_text(json_object *held);
