/*
 * Kernel sysctls kept at their configured values ([sysctl] in the config). The kernel sends no
 * event when a sysctl changes (and /proc/sys takes no inotify watch), so they are checked on the
 * daemon's recheck timer (recheck.h) and on every reload. In enforce
 * mode a drifted value is written back and a sysctl-corrected event logged; in audit mode a
 * sysctl-drift event is logged once per drifted value.
 */
#pragma once

#include <event2/event.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "daemon/config/conf.h"

struct sysctl_keeper;

/* root is normally /proc/sys; tests point it at a directory of their own. */
int sysctl_keeper_new(struct event_base *base, const char *root, struct sysctl_keeper **ret);
void sysctl_keeper_free(struct sysctl_keeper *k);
/* Takes the wanted values and the mode from config and checks at once. */
int sysctl_keeper_configure(struct sysctl_keeper *k, const struct sparkd_config *config);
/* How many sysctls are kept: none needs no recheck. */
size_t sysctl_keeper_count(const struct sysctl_keeper *k);
/* Checks every sysctl now; returns how many drifted. */
unsigned sysctl_keeper_check(struct sysctl_keeper *k);
/* The links method's list: [{name, wanted, actual, state, corrections, error}]. */
json_object *sysctl_keeper_to_json(const struct sysctl_keeper *k);

enum sysctl_status {
        SYSCTL_OK,
        SYSCTL_DRIFT,      /* differs; audit mode, or not corrected yet */
        SYSCTL_FAILED,     /* differs and writing the wanted value failed */
        SYSCTL_UNREADABLE, /* the last read failed */
};

/* A kept sysctl after its last check. The strings are the keeper's: valid until its next check
 * or configure. */
struct sysctl_state {
        const char *name;
        const char *wanted;
        const char *actual; /* NULL when unreadable */
        enum sysctl_status status;
        uint64_t corrections;
        int write_error; /* negative errno of the last failed correction, 0 when none */
};

/* Every kept sysctl, in the config's order (*ret is malloc'ed). */
int sysctl_keeper_states(const struct sysctl_keeper *k, struct sysctl_state **ret, size_t *n);

/* Pure helpers, exposed for tests. */
int sysctl_read(const char *root, const char *name, char *buf, size_t size);
int sysctl_write(const char *root, const char *name, const char *value);
/* Equal after collapsing runs of blanks ("4096\t87380" equals "4096 87380"). */
bool sysctl_values_equal(const char *a, const char *b);
