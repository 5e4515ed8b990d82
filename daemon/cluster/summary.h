/*
 * A node's summary as it travels between nodes: {type, body, key, sig, age_ms, sections}. The
 * body is the exact text its origin wrote and signed with its node key (common/node_key.h): who
 * made it (origin node id, name, instance, sequence, uptime) and the digest of each of its
 * sections' text (name -> the first 16 bytes of its SHA-256, hex). "sections" carries texts
 * (name -> the section's JSON as a string), each checked against its digest: all of them, or
 * only those that changed since the summary its origin sent before, the others being what the
 * receiver holds under the same digest. A change is so sent as the change, and still signed
 * whole: a receiver that lacks a section a digest names asks for the summary with every text.
 * A relay passes the body text on as it came, so the signature holds at every hop, and changes
 * only age_ms, how old it was when sent, outside what is signed. Reading one from a peer is strict and
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
/* The format this sparkd writes; one that reads a higher format uses the fields it knows. Format
 * 2 had the sections inside the body: each change sent every section. */
#define SUMMARY_FORMAT     3
#define SUMMARY_DIGEST_LEN 32
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
        uint64_t age_ms;      /* how old it was when the sender sent it */
        uint64_t uptime_ms;   /* the origin's uptime when it made it */
        json_object *digests; /* name -> digest hex, from the body; NULL in an alive */
        json_object *carried; /* name -> text string, from msg; NULL when it carries none */
        bool is_alive;
};

/* Reads msg (a parsed peer message) as a summary (or an alive), every check but those of
 * summary_verify, into *ret (summary_clear puts what it holds): what a receiver needs to judge
 * whether it is worth more. -EBADMSG with why set when it is not valid; -EMSGSIZE when its JSON
 * is over SUMMARY_MAX_BYTES. */
int summary_read(json_object *msg, bool is_alive, struct summary *ret, char *why, size_t why_size);
/* The costly checks of what summary_read read: the texts carried (their digests, their JSON) and
 * the signature. A node that gets each alive from several relays in a mesh that is forming
 * verified every copy: at 64 nodes on two cores, half a daemon's CPU in a profile. -EBADMSG with why. */
int summary_verify(const struct summary *s, char *why, size_t why_size);
/* summary_read and summary_verify: checks msg, its signature included, and fills *ret (summary_clear
 * puts what it holds). -EBADMSG with why set when it is not a valid summary of its origin (a
 * section carried that its digest does not name, or whose text is not that digest's or not
 * JSON, among the reasons); -EMSGSIZE when its JSON is over SUMMARY_MAX_BYTES. */
int summary_check(json_object *msg, struct summary *ret, char *why, size_t why_size);
/* The same for an alive (SUMMARY_ALIVE_TYPE): every field but the sections, which it must not have. */
int summary_check_alive(json_object *msg, struct summary *ret, char *why, size_t why_size);
void summary_clear(struct summary *s);
/* Parses text strictly and checks it; on success *ret->msg is a new reference the caller puts,
 * after summary_clear. */
int summary_parse(const char *text, size_t len, struct summary *ret, char *why, size_t why_size);
/* The text of the section name that s carries, with its length; NULL when it carries none, or a
 * splice. */
const char *summary_carried_text(const struct summary *s, const char *name, size_t *len);
/* The splice (summary_splice.h) s carries for section name, borrowed; NULL when none. */
json_object *summary_carried_splice(const struct summary *s, const char *name);
/* The digest of text, SUMMARY_DIGEST_LEN hex digits, into out. */
void summary_digest(const char *text, size_t len, char out[static SUMMARY_DIGEST_LEN + 1]);
/* name -> digest of every section of sections (each held as its text, common/json_raw.h); NULL
 * without memory. */
json_object *summary_digests(json_object *sections);
/* A new message signed with key (origin is the id key names), age 0: a body naming digests (of
 * sections, summary_digests), and the text of every section. NULL without memory. */
json_object *summary_new(EVP_PKEY *key, const char *origin, const char *name, const char *instance,
                         uint64_t seq, uint64_t uptime_ms, json_object *sections, json_object *digests);
/* full (of summary_new, with its digests) as the change since known, the digests of the summary
 * sent before: the same message carrying only the sections whose digest is not the same in
 * known, an array as the splice of its elements from its text in known_texts (that summary's
 * "sections", or NULL) where that is much smaller. A new message sharing full's members; NULL
 * without memory. */
json_object *summary_delta(json_object *full, json_object *digests, json_object *known,
                           json_object *known_texts);
/* An alive for the summary seq of origin, age 0, signed the same way. */
json_object *summary_new_alive(EVP_PKEY *key, const char *origin, const char *name, const char *instance,
                               uint64_t seq, uint64_t uptime_ms);
/* 1 to SUMMARY_SECTION_NAME_MAX of a-z, 0-9, '_' and '-'. */
bool summary_is_section_name(const char *s);
/* 32 lowercase hex digits. */
bool summary_is_id(const char *s);
