/*
 * The doctor's result kept for its readers (the status's health line, the metrics), so that a call reads it
 * instead of running the doctor, whose sysfs reads cost about a millisecond on the event loop. It is made
 * again when read and due: after the facts under it changed (doctor_keep_changed: a link or address event, a
 * peer, a probe result, the recheck timer's corrections), though never twice within DOCTOR_KEEP_MIN_GAP_USEC
 * however fast the events come, and DOCTOR_KEEP_MAX_AGE_USEC after it was made, for the facts no event tells
 * of (files under the host root). A node nobody asks runs no doctor.
 */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#define DOCTOR_KEEP_MAX_AGE_USEC 1000000LL
#define DOCTOR_KEEP_MIN_GAP_USEC 100000LL

/* Runs the doctor now: 0 with *out a new reference, or a negative errno. */
typedef int (*doctor_keep_run_fn)(void *userdata, json_object **out);

/* Its fields are the keep's own; it is held by value so that making one cannot fail. */
struct doctor_keep {
        doctor_keep_run_fn run;
        void *userdata;
        uint64_t (*clock)(void);
        json_object *result; /* NULL: not made, or the facts could not be read */
        uint64_t made_usec;
        uint64_t generation; /* 0: never made */
        uint64_t runs;
        bool is_changed;
};

/* clock: the monotonic microseconds the ages are counted in; NULL: the daemon's clock. Returns
 * k. */
struct doctor_keep *doctor_keep_init(struct doctor_keep *k, doctor_keep_run_fn run, void *userdata,
                                     uint64_t (*clock)(void));
void doctor_keep_clear(struct doctor_keep *k);
/* The facts may have changed: the next read after the gap runs the doctor again. */
void doctor_keep_changed(struct doctor_keep *k);
/* The kept result, made first when due: borrowed, valid until the next call on k; NULL when the
 * doctor could not read the facts. */
json_object *doctor_keep_get(struct doctor_keep *k);
/* A result made now by another reader (the doctor method) becomes the kept one (a reference is
 * taken). */
void doctor_keep_put(struct doctor_keep *k, json_object *doctor);
/* Changes whenever the kept result is made again: what is built from it is current while this is
 * the same. */
uint64_t doctor_keep_generation(const struct doctor_keep *k);
/* The doctor's runs since k was made, those of doctor_keep_put included. */
uint64_t doctor_keep_runs(const struct doctor_keep *k);
