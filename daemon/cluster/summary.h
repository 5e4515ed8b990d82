/*
 * A node's summary as it travels between nodes: who made it (origin node id, name, instance,
 * sequence), how old it was when sent, and its sections (name -> JSON). Reading one from a peer is
 * strict and bounded: whatever is not valid is refused whole, with a sentence saying why. Fields
 * this version does not know are kept in the message (a newer sparkd may add them) and ignored.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SUMMARY_TYPE "cluster-summary"
/* The format this sparkd writes; one that reads a higher format uses the fields it knows. */
#define SUMMARY_FORMAT 1
/* A summary's JSON, envelope included, leaves room under the peer channel's 64 KiB line for the
 * relay's changes. */
#define SUMMARY_MAX_BYTES        (56 * 1024)
#define SUMMARY_MAX_SECTIONS     32
#define SUMMARY_SECTION_NAME_MAX 32
#define SUMMARY_NODE_NAME_MAX    63
#define SUMMARY_ID_LEN           32
/* Nesting a section may use; deeper is refused, not recursed into. */
#define SUMMARY_MAX_DEPTH 16
/* An age beyond a year is not a summary anyone keeps (forget_after is at most 30 days). */
#define SUMMARY_MAX_AGE_MS (366ULL * 24 * 3600 * 1000)

/* What a valid summary says; the strings and sections are borrowed from msg. */
struct summary {
        json_object *msg; /* the whole message, unknown fields kept */
        const char *origin;
        const char *name;
        const char *instance;
        int64_t format;
        uint64_t seq;
        uint64_t age_ms;    /* how old it was when the sender sent it */
        uint64_t uptime_ms; /* the origin's uptime when it made it */
        json_object *sections;
};

/* Checks msg (a parsed peer message) and fills *ret borrowing from it. -EBADMSG with why set when
 * it is not a valid summary; -EMSGSIZE when its JSON is over SUMMARY_MAX_BYTES. */
int summary_check(json_object *msg, struct summary *ret, char *why, size_t why_size);
/* Parses text strictly and checks it; on success *ret->msg is a new reference the caller puts. */
int summary_parse(const char *text, size_t len, struct summary *ret, char *why, size_t why_size);
/* A new message: this node's sections (a reference is taken), age 0. */
json_object *summary_new(const char *origin, const char *name, const char *instance, uint64_t seq,
                         uint64_t uptime_ms, json_object *sections);
/* 32 lowercase hex digits. */
bool summary_is_id(const char *s);
