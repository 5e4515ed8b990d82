/*
 * Where the daemon's messages go: the systemd journal with structured fields, or one line each on
 * stderr when not running under systemd. Messages below the configured level are dropped here.
 */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <syslog.h>

#include "common/macro.h"

enum log_target {
        LOG_TARGET_AUTO,
        LOG_TARGET_JOURNAL,
        LOG_TARGET_STDERR,
};

/* One structured field: key is the lower-case suffix ("iface" becomes SPARKD_IFACE in the
 * journal); a NULL value leaves the field out. */
struct log_field {
        const char *key;
        const char *value;
};

int log_target_from_string(const char *s, enum log_target *out);
int log_level_from_string(const char *s, int *out);
const char *log_level_to_string(int level);

/* AUTO picks the journal when systemd connected our stderr to it, or when a detached daemon finds
 * the journal socket; otherwise stderr. */
void log_open(enum log_target target, bool detached);
void log_set_max_level(int level);
int log_get_max_level(void);
bool log_is_journal(void);

/* message_id may be NULL; fields may be NULL when n is 0. */
void log_structured(int level, const char *message_id, const struct log_field *fields, size_t n,
                    const char *fmt, ...) _printf_(5, 6);
void log_msg(int level, const char *fmt, ...) _printf_(2, 3);

#define log_debug(...)   log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...)    log_msg(LOG_INFO, __VA_ARGS__)
#define log_notice(...)  log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_error(...)   log_msg(LOG_ERR, __VA_ARGS__)
