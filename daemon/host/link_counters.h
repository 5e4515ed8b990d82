/*
 * The per-link counters of flaps and corrections, kept in the state directory (links.json) so that
 * they survive a restart: saved for every link that has any, and held under the link's name while
 * it is absent, for it to take back when it appears.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "daemon/base/store.h"
#include "link_state.h"

struct saved_counters;

struct link_counters {
        struct store *store;          /* NULL: counters live only as long as the process */
        struct saved_counters *saved; /* counters of links not (yet) present */
        size_t n_saved;
};

/* Reads links.json; a damaged file is moved aside (an event says so) and counting starts at 0. */
void link_counters_load(struct link_counters *c);
/* Writes the held counters and those of the links given; logs a failure. */
int link_counters_save(const struct link_counters *c, struct link *const *links, size_t n);
/* Holds the counters of a link that goes away, under its name. */
int link_counters_hold(struct link_counters *c, const char *name, uint64_t flaps, uint64_t corrections);
/* A link that appears takes over the counters held under its name. */
void link_counters_take(struct link_counters *c, struct link *l);
void link_counters_done(struct link_counters *c);
