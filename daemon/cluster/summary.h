/*
 * A node's summary as it travels between nodes: {type, body, key, sig, age_ms}. The body is the
 * exact text its origin wrote and signed with its node key (common/node_key.h): who made it
 * (origin node id, name, instance, sequence, uptime) and its sections (name -> JSON). A relay
 * passes the body text on as it came, so the signature holds at every hop, and changes only
 * age_ms, how old it was when sent, outside what is signed. Reading one from a peer is strict and
 * bounded: whatever is not valid, whose key does not name its origin or whose signature does not
 * verify is refused whole, with a sentence saying why. Fields this version does not know are kept
 * (a newer sparkd may add them) and ignored.
 */
#pragma once

#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/text_check.h"

#define SUMMARY_TYPE "cluster-summary"
/* "Summary seq N of origin is still current": a summary without sections, sent at the refresh when
 * nothing changed, so a silent node ages out without its sections crossing the wire each time. */
#define SUMMARY_ALIVE_TYPE "cluster-alive"
/* "Send me origin's summary": the answer to an alive naming a summary this node does not hold. */
#define SUMMARY_WANT_TYPE "cluster-want"
/* The format this sparkd writes; one that reads a higher format uses the fields it knows. */
#define SUMMARY_FORMAT 2
/* A summary's JSON, envelope included, leaves room under the peer channel's 64 KiB line for the
 * relay's changes. */
#define SUMMARY_MAX_BYTES        (56 * 1024)
#define SUMMARY_MAX_SECTIONS     32
#define SUMMARY_SECTION_NAME_MAX 32
#define SUMMARY_NODE_NAME_MAX    TEXT_NODE_NAME_MAX
#define SUMMARY_ID_LEN           32
/* Nesting a section may use; deeper is refused, not recursed into. */
#define SUMMARY_MAX_DEPTH 16
/* An age beyond a year is not a summary anyone keeps (forget_after is at most 30 days). */
#define SUMMARY_MAX_AGE_MS (366ULL * 24 * 3600 * 1000)

/* What a valid summary says; the strings are borrowed from msg and body, the sections from body. */
struct summary {
        json_object *msg;  /* the whole message, unknown fields kept */
        json_object *body; /* the body read from its text: a reference summary_clear puts */
        const char *body_text;
        size_t body_len;
        const char *key; /* the origin's public key, hex */
        const char *sig;
        const char *origin;
        const char *name;
        const char *instance;
        int64_t format;
        uint64_t seq;
        uint64_t age_ms;       /* how old it was when the sender sent it */
        uint64_t uptime_ms;    /* the origin's uptime when it made it */
        json_object *sections; /* NULL in an alive */
        bool is_alive;
};

/* Checks msg (a parsed peer message), its signature included, and fills *ret (summary_clear
 * puts what it holds). -EBADMSG with why set when it is not a valid summary of its origin;
 * -EMSGSIZE when its JSON is over SUMMARY_MAX_BYTES. */
int summary_check(json_object *msg, struct summary *ret, char *why, size_t why_size);
/* The same for an alive (SUMMARY_ALIVE_TYPE): every field but the sections, which it must not have. */
int summary_check_alive(json_object *msg, struct summary *ret, char *why, size_t why_size);
void summary_clear(struct summary *s);
/* Parses text strictly and checks it; on success *ret->msg is a new reference the caller puts,
 * after summary_clear. */
int summary_parse(const char *text, size_t len, struct summary *ret, char *why, size_t why_size);
/* A new message signed with key (origin is the id key names): this node's sections (a reference
 * is taken), age 0. NULL without memory. */
json_object *summary_new(EVP_PKEY *key, const char *origin, const char *name, const char *instance,
                         uint64_t seq, uint64_t uptime_ms, json_object *sections);
/* An alive for the summary seq of origin, age 0, signed the same way. */
json_object *summary_new_alive(EVP_PKEY *key, const char *origin, const char *name, const char *instance,
                               uint64_t seq, uint64_t uptime_ms);
/* 1 to SUMMARY_SECTION_NAME_MAX of a-z, 0-9, '_' and '-'. */
bool summary_is_section_name(const char *s);
/* 32 lowercase hex digits. */
bool summary_is_id(const char *s);
