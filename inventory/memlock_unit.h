/*
 * The memlock limit sparkd's systemd unit sets (LimitMEMLOCK=), as the unit file and its drop-ins
 * under the host root say it, with the line that sets it: so a fix can say which line keeps the
 * limit low, or that the unit is already right and systemd has not applied it yet.
 */
#pragma once

#include <stdint.h>

struct hostfacts;

/* Fills memlock_unit and memlock_unit_source; -ENOMEM is the only error. */
int memlock_read_unit(const char *host_root, struct hostfacts *f);

/* One LimitMEMLOCK value ("infinity", "64M", "8388608", "SOFT:HARD": the soft part) into bytes
 * (HOSTFACTS_UNLIMITED for infinity); -EINVAL for anything else. */
int memlock_parse_unit_value(const char *value, uint64_t *out);
