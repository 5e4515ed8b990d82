/*
 * sparkc's exit statuses, the one list of them: the commands return these values, and
 * `sparkc --help` prints their meanings from this module's table (the man page and the README are
 * checked against that text by the lint).
 */
#pragma once

#include <stdio.h>

/* Every command. */
enum {
        EXIT_OK = 0,
        EXIT_DAEMON_ERROR = 1,
        EXIT_UNREACHABLE = 2,
};

/* sparkc doctor: the monitoring-plugin convention. */
enum {
        DOCTOR_EXIT_OK = 0,
        DOCTOR_EXIT_WARN = 1,
        DOCTOR_EXIT_FAIL = 2,
        DOCTOR_EXIT_UNKNOWN = 3,
};

/* sparkc env --check: the worst finding decides. */
enum {
        ENV_CHECK_EXIT_OK = 0,
        ENV_CHECK_EXIT_WARN = 1,
        ENV_CHECK_EXIT_ERROR = 2,
        ENV_CHECK_EXIT_UNKNOWN = 3,
};

/* sparkc probe: the worst result decides. */
enum {
        PROBE_EXIT_OK = 0,
        PROBE_EXIT_DEGRADED = 1,
        PROBE_EXIT_FAILED = 2,
};

/* Writes the "Exit status:" part of `sparkc --help`. */
void exit_status_print_help(FILE *f);
