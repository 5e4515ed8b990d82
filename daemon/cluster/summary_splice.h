/*
 * A section that is an array, sent as the change of its elements: {from, at, drop, add}, the
 * text held under digest `from` with `drop` elements removed at index `at` and the elements of
 * the array text `add` put in their place. A node's probe results are such a list, one entry per
 * peer and kind in a fixed order, and a round of probes changes one entry at a time: sent whole,
 * each change of the results of 64 nodes was some 20 KiB to every peer, the entry some 300
 * bytes. The text a splice makes is checked against the digest the signed body names, so a
 * splice carries no trust of its own. Arrays are written as json-c writes them plainly ("[",
 * the elements' texts joined by ",", "]"), the form every held text of a section has.
 */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

/* Elements an array may have to be spliced; larger ones are sent whole. */
#define SUMMARY_SPLICE_MAX_ELEMENTS 4096

struct summary_splice {
        const char *from; /* the digest of the text it changes */
        size_t at, drop;
        const char *add; /* an array's text */
        size_t add_len;
};

/* The splice that makes new_text from old_text (both arrays as held), as a new object; NULL when
 * either is not such an array or the splice would not be much smaller than new_text itself. */
json_object *summary_splice_new(const char *old_text, size_t old_len, const char *old_digest,
                                const char *new_text, size_t new_len);
/* Reads a splice object (from a peer): 0, or -EBADMSG when it is not {from: digest, at, drop:
 * numbers up to SUMMARY_SPLICE_MAX_ELEMENTS, add: a string}. Strings borrowed from o. */
int summary_splice_read(json_object *o, struct summary_splice *ret);
/* The text sp makes of base (a malloc'd string, its length in *len); NULL when base or sp->add is
 * not an array, or base has fewer than at + drop elements. */
char *summary_splice_apply(const char *base, size_t base_len, const struct summary_splice *sp, size_t *len);
