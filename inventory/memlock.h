/*
 * The memlock limit login sessions get, read from pam_limits' files (limits.conf and limits.d)
 * for all users ("*"), with the line that sets it.
 */
#pragma once

#include <stdint.h>

struct hostfacts;

/* Fills memlock_login and memlock_login_source; -ENOMEM is the only error. */
int memlock_read_login(const char *host_root, struct hostfacts *f);

/*
 * One limits.conf line; when it sets memlock for everyone ("*"), returns which limits it sets
 * (HOSTFACTS_LIMIT_SOFT, HOSTFACTS_LIMIT_HARD, both for "-") and the value in bytes or
 * HOSTFACTS_UNLIMITED; 0 for lines about anything else, -EINVAL for malformed ones.
 */
#define HOSTFACTS_LIMIT_SOFT 1
#define HOSTFACTS_LIMIT_HARD 2
int hostfacts_parse_limits_line(const char *line, uint64_t *memlock);
